# tests/data.mk - the data side's tests (data/, docs/data.md):
#   data_check.sh    every file kind each program writes (hpc-odegen plain,
#                    sharded and joined; hpc-train checkpoints and
#                    metrics.csv, MSE and cross-entropy, dp, --shard,
#                    --parallel pipe; hpc-matmul output and inputs) at 1-3
#                    ranks held against its schema by hpc-h5check; bad
#                    files one line, exit 1, from hpc-h5check and from the
#                    program that takes them
#   data_schemas.sh  the guides' tables are what the schemas say
#                    (data/schema-tables.sh --check), the schemas parse
#   data_convert.sh  hpc-convert: CSV, .npz, .npy, NetCDF, PyTorch -> /X,/Y
#                    bit for bit; odegen -> NetCDF (ncdump, xarray); bad
#                    data one line, exit 1, no file
#   data_digits.sh   scikit-learn's digits trained by hpc-train at 1 and 2
#                    ranks against MLPClassifier and PyTorch in the same
#                    run; diabetes (MSE) the same
dist_check_SCRIPTS += tests/data_check.sh tests/data_schemas.sh tests/data_convert.sh tests/data_digits.sh
TESTS += tests/data_check.sh tests/data_schemas.sh tests/data_convert.sh tests/data_digits.sh
