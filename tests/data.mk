# tests/data.mk - the data side's tests (data/, docs/data.md):
#   data_schemas.sh  the guides' tables are what the schemas say
#                    (data/schema-tables.sh --check), the schemas parse
dist_check_SCRIPTS += tests/data_schemas.sh
TESTS += tests/data_schemas.sh
