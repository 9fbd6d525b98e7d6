# batch/local.mk - Slurm scripts and the demo.
dist_noinst_SCRIPTS = batch/demo.sh
