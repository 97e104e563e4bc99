# dp_agg: differentially private aggregates for PostgreSQL

EXTENSION = dp_agg
MODULE_big = dp_agg

OBJS = \
	src/dp_agg.o \
	src/guc.o \
	src/relcache_watch.o \
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
	src/dist_catalog.o \
	src/dist_protect.o \
	src/dist_session.o \
	src/dist_token.o \
	src/dist_replay.o \
	src/dist_state.o \
	src/dist_plan.o \
	src/dist_fingerprint.o \
	src/dist_exec.o

# privacy units: the rewrite into bounded contributions per unit
OBJS += \
	src/privacy_unit.o \
	src/privacy_unit_api.o \
	src/unit_keep.o

# privacy units with k = 1: the fused path, one aggregation by unit
OBJS += \
	src/siphash.o \
	src/pick_key.o \
	src/unit_pick.o

# privacy units wherever their rows are read: inheritance trees, the
# catalog of units, and what a DP statement reads beside its DP aggregates
OBJS += \
	src/inheritance.o \
	src/unit_catalog.o \
	src/side_reads.o

# everyday statement shapes: joins to lookup tables, and the units of a
# sample (privacy units through views, sub-queries and CTEs are in
# privacy_unit.o)
OBJS += \
	src/lookup_join.o \
	src/unit_sample.o

# public group keys: the domains of GROUP BY keys that need no selection
OBJS += \
	src/keyset.o \
	src/bins.o \
	src/key_list.o \
	src/domain_catalog.o \
	src/public_domain.o \
	src/domain_exec.o \
	src/domain_api.o \
	src/top_k.o

# tight accounting: joint calibration, the Renyi DP of the subsampled
# discrete Laplace
OBJS += \
	src/joint.o \
	src/rdp_laplace.o

# the analyst's statistics: variance, quantiles, automatic bounds, error bars
OBJS += \
	src/estimators.o \
	src/estimate.o \
	src/error_bars.o \
	src/quantile_tree.o \
	src/quantile_aggregates.o \
	src/auto_bounds.o

# 0.1 is the install script; each later version is the update script from
# the one before (PostgreSQL installs 0.2 as 0.1 followed by 0.1--0.2)
DATA = sql/dp_agg--0.1.sql sql/dp_agg--0.1--0.2.sql sql/dp_agg--0.2--0.3.sql sql/dp_agg--0.3--0.4.sql

REGRESS = interface calibration clamping bad_input parallel lattice budget guard ledger charging sampling preview accounting budget_row limits protect protect_attack protect_scope selection public_domain top_k pld pld_admission selection_rdp privacy_unit privacy_unit_group variance error_bars quantiles auto_bounds privacy_unit_tree side_reads lookup_join privacy_unit_source unit_sample partitionwise protect_shapes noise priced_releases privacy_unit_keep charger selection_draws protect_floor
REGRESS_OPTS = --inputdir=. --load-extension=dp_agg

# concurrency of budget charges (pg_isolation_regress)
ISOLATION = budget_race budget_rollback budget_queue budget_rdp_race budget_rdp_queue budget_pld_race budget_rdp_selection
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=test/isolation/output_iso --load-extension=dp_agg

SHLIB_LINK += -lcrypto -lm
# PLD accounting: FFTs from Debian's libkissfft-dev (float)
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

# the mutant suite (test/mutants/README.md): every mutant, or those named in
# MUTANTS; built into a private copy of PG_CONFIG's PostgreSQL, never into it
.PHONY: mutants
mutants:
	PG_CONFIG=$(PG_CONFIG) bash test/mutants/run.sh $(MUTANTS)

# the module graph: acyclic includes and calls, layered (doc/layout.md,
# "Layout")
.PHONY: check-graph
check-graph: all
	bash test/check-graph.sh

# packaging: META.json, dp_agg.control, the update scripts, LICENSE and
# CHANGELOG.md agree, and no tracker number is in the tree
.PHONY: check-packaging
check-packaging:
	bash test/check-packaging.sh

# the documentation: README.md and doc/*.md, every relative link and anchor
# resolved, every page linked from the README (test/docs-links.py)
.PHONY: check-docs
check-docs:
	python3 test/docs-links.py
