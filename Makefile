# dp_agg: differentially private aggregates for PostgreSQL

EXTENSION = dp_agg
MODULE_big = dp_agg

OBJS = \
	src/dp_agg.o \
	src/guc.o \
	src/random.o \
	src/noise.o \
	src/calibrate.o \
	src/catalog.o \
	src/params.o \
	src/noise_param.o \
	src/grid.o \
	src/release.o \
	src/registry.o \
	src/release_rdp.o \
	src/pld.o \
	src/pld_state.o \
	src/describe.o \
	src/price.o \
	src/aggregates.o \
	src/numeric_units.o \
	src/functions.o \
	src/guard.o \
	src/sampling.o \
	src/hooks.o \
	src/budget.o \
	src/budget_row.o \
	src/charger.o \
	src/preview.o \
	src/protect.o \
	src/protect_check.o \
	src/protect_guard.o \
	src/protect_stats.o \
	src/protect_api.o \
	src/selection_gaussian.o \
	src/selection_mechanism.o \
	src/selection.o \
	src/dist_token.o \
	src/dist_replay.o \
	src/dist_state.o \
	src/dist_plan.o \
	src/dist_fingerprint.o \
	src/dist_exec.o

# issue 12: privacy units
OBJS += \
	src/privacy_unit.o \
	src/privacy_unit_api.o \
	src/unit_keep.o

# issue 12, units3: the fused path of privacy units with k = 1
OBJS += \
	src/siphash.o \
	src/pick_key.o \
	src/unit_pick.o

# nothing on the row path of protected relations can fail or report
OBJS += \
	src/row_rules.o \
	src/row_seal.o \
	src/row_trap.o \
	src/protect_settings.o

# issue 13: tight accounting (joint calibration, subsampled discrete Laplace)
OBJS += \
	src/joint.o \
	src/rdp_laplace.o

# 0.1 is the install script; each later version is the update script from
# the one before (PostgreSQL installs 0.2 as 0.1 followed by 0.1--0.2)
DATA = sql/dp_agg--0.1.sql sql/dp_agg--0.1--0.2.sql sql/dp_agg--0.2--0.3.sql sql/dp_agg--0.3--0.4.sql

REGRESS = interface calibration clamping bad_input parallel lattice budget guard ledger charging sampling preview accounting budget_row limits protect protect_attack protect_rowpath protect_settings selection pld selection_rdp privacy_unit privacy_unit_group
REGRESS_OPTS = --inputdir=. --load-extension=dp_agg

# concurrency of budget charges (pg_isolation_regress)
ISOLATION = budget_race budget_rollback budget_queue budget_rdp_race budget_rdp_queue budget_pld_race budget_rdp_selection
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=test/isolation/output_iso --load-extension=dp_agg

SHLIB_LINK += -lcrypto -lm
# Issue 13 (pld accounting): FFTs from Debian's libkissfft-dev (float)
KISSFFT_CFLAGS := $(shell pkg-config --cflags kissfft-float 2>/dev/null || echo -I/usr/include/kissfft -Dkiss_fft_scalar=float)
KISSFFT_LIBS := $(shell pkg-config --libs kissfft-float 2>/dev/null || echo -lkissfft-float)
PG_CPPFLAGS += $(KISSFFT_CFLAGS)
SHLIB_LINK += $(KISSFFT_LIBS)
# Floating point chooses noise parameters: keep every operation as written.
PG_CFLAGS += -ffp-contract=off

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on every header: they are few and small
$(OBJS): $(wildcard src/*.h)

# TAP tests against the installed extension (each starts its own clusters):
#   make prove_installcheck PROVE_TESTS='test/t/*.pl'
.PHONY: prove_installcheck
prove_installcheck:
	$(prove_installcheck)

# the module graph: acyclic includes and calls, layered (README, "Layout")
.PHONY: check-graph
check-graph: all
	bash test/check-graph.sh
