# batch/local.mk - Slurm scripts and the demo.
dist_noinst_SCRIPTS = batch/demo.sh batch/deps.sh batch/info.sh batch/odegen.sh batch/train.sh
EXTRA_DIST += batch/common.sh
