# dp_agg: differentially private aggregates for PostgreSQL

EXTENSION = dp_agg
MODULE_big = dp_agg
EXTVERSION = 0.1

OBJS = \
	src/dp_agg.o \
	src/guc.o \
	src/random.o \
	src/noise.o \
	src/calibrate.o \
	src/release.o \
	src/aggregates.o \
	src/functions.o \
	src/guard.o \
	src/sampling.o \
	src/hooks.o \
	src/budget.o \
	src/charger.o

DATA = sql/dp_agg--$(EXTVERSION).sql

REGRESS = interface
REGRESS_OPTS = --inputdir=. --load-extension=dp_agg

SHLIB_LINK += -lcrypto -lm
# Floating point chooses noise parameters: keep every operation as written.
PG_CFLAGS += -ffp-contract=off

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on every header: they are few and small
$(OBJS): $(wildcard src/*.h)
