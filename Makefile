# dp_agg: differentially private aggregates for PostgreSQL

EXTENSION = dp_agg
MODULE_big = dp_agg

# src/ by feature, one folder each, bottom up as in src/LAYERS (doc/layout.md,
# "Layout"); a header is included by its name alone, from any folder
OBJS =

# core: settings, randomness, hashing, version shims, the catalogs every
# feature reads, the nodes the rewrites build
OBJS += \
	src/core/catalog.o \
	src/core/dp_calls.o \
	src/core/dist_catalog.o \
	src/core/guc.o \
	src/core/inheritance.o \
	src/core/params.o \
	src/core/random.o \
	src/core/relcache_watch.o \
	src/core/rewrite_nodes.o \
	src/core/siphash.o \
	src/core/unit_catalog.o

# noise: calibration and the exact samplers, the grid, the selection
# mechanisms
OBJS += \
	src/noise/calibrate.o \
	src/noise/grid.o \
	src/noise/noise.o \
	src/noise/noise_param.o \
	src/noise/numeric_units.o \
	src/noise/selection_gaussian.o \
	src/noise/selection_mechanism.o

# release: what each DP call releases: tickets, estimates, quantiles,
# automatic bounds, sampling
OBJS += \
	src/release/auto_bounds.o \
	src/release/describe.o \
	src/release/error_bars.o \
	src/release/estimate.o \
	src/release/estimators.o \
	src/release/quantile_aggregates.o \
	src/release/quantile_tree.o \
	src/release/registry.o \
	src/release/release.o \
	src/release/release_noise.o \
	src/release/sampling.o

# protect: protected relations: the catalog cache, its Citus labels, the SQL
# functions
OBJS += \
	src/protect/dist_protect.o \
	src/protect/protect.o \
	src/protect/protect_api.o

# guard: which statements run: the guard, the stricter one of untrusted
# roles, what a statement reads
OBJS += \
	src/guard/guard.o \
	src/guard/insert_drain.o \
	src/guard/lookup_join.o \
	src/guard/plan_guard.o \
	src/guard/plan_input.o \
	src/guard/plan_nodes.o \
	src/guard/plan_units.o \
	src/guard/protect_check.o \
	src/guard/protect_guard.o \
	src/guard/protect_settings.o \
	src/guard/protect_stats.o \
	src/guard/row_compare.o \
	src/guard/row_fields.o \
	src/guard/row_rules.o \
	src/guard/row_seal.o \
	src/guard/row_trap.o \
	src/guard/side_reads.o

# selection: GROUP BY keys: private selection, public domains, top-k
OBJS += \
	src/selection/bins.o \
	src/selection/domain_api.o \
	src/selection/domain_catalog.o \
	src/selection/domain_exec.o \
	src/selection/domain_group.o \
	src/selection/domain_rows.o \
	src/selection/key_list.o \
	src/selection/keyset.o \
	src/selection/public_domain.o \
	src/selection/selection.o \
	src/selection/top_k.o

# units: privacy units: the rewrite, its SQL functions, the keys of an
# execution
OBJS += \
	src/units/pick_key.o \
	src/units/privacy_unit.o \
	src/units/privacy_unit_api.o \
	src/units/unit_keep.o \
	src/units/unit_pick.o \
	src/units/unit_sample.o

# accounting: price, budgets, charges, Renyi and PLD accounting, the
# calculators
OBJS += \
	src/accounting/admission.o \
	src/accounting/budget.o \
	src/accounting/budget_api.o \
	src/accounting/budget_charge.o \
	src/accounting/budget_row.o \
	src/accounting/budget_store.o \
	src/accounting/budget_window.o \
	src/accounting/charge_batch.o \
	src/accounting/charge_lease.o \
	src/accounting/charge_ledger.o \
	src/accounting/charge_request.o \
	src/accounting/charger.o \
	src/accounting/charger_shmem.o \
	src/accounting/functions.o \
	src/accounting/joint.o \
	src/accounting/journal.o \
	src/accounting/lease.o \
	src/accounting/pld.o \
	src/accounting/pld_release.o \
	src/accounting/pld_state.o \
	src/accounting/price.o \
	src/accounting/rdp_laplace.o \
	src/accounting/release_rdp.o \
	src/accounting/write_cache.o

# citus: Citus: the coordinator's rewrite, fragments, their signatures, the
# workers' side
OBJS += \
	src/citus/dist_access.o \
	src/citus/dist_exec.o \
	src/citus/dist_fingerprint.o \
	src/citus/dist_inner.o \
	src/citus/dist_plan.o \
	src/citus/dist_price.o \
	src/citus/dist_replay.o \
	src/citus/dist_session.o \
	src/citus/dist_state.o \
	src/citus/dist_token.o \
	src/citus/dist_units.o \
	src/citus/dist_worker.o

# pipeline: _PG_init, the hooks, the aggregates' functions, preview
OBJS += \
	src/pipeline/aggregate_serial.o \
	src/pipeline/aggregates.o \
	src/pipeline/dist_aggregates.o \
	src/pipeline/dp_agg.o \
	src/pipeline/hooks.o \
	src/pipeline/preview.o \
	src/pipeline/unit_aggregates.o

PG_CPPFLAGS += $(patsubst %/,-I%,$(sort $(wildcard src/*/)))

# 0.1 is the install script; each later version is the update script from
# the one before (PostgreSQL installs 0.2 as 0.1 followed by 0.1--0.2)
DATA = sql/dp_agg--0.1.sql sql/dp_agg--0.1--0.2.sql sql/dp_agg--0.2--0.3.sql sql/dp_agg--0.3--0.4.sql

REGRESS = interface calibration clamping bad_input parallel lattice budget budget_policy guard ledger charging leases sampling preview accounting budget_row limits protect protect_attack protect_rowpath protect_settings protect_scope selection public_domain top_k pld pld_admission selection_rdp privacy_unit privacy_unit_group variance error_bars quantiles auto_bounds privacy_unit_tree side_reads lookup_join privacy_unit_source unit_sample partitionwise protect_shapes noise priced_releases dp_calls privacy_unit_keep charger prepay selection_draws protect_floor budget_versions install_schema
REGRESS_OPTS = --inputdir=. --load-extension=dp_agg

# concurrency of budget charges (pg_isolation_regress)
ISOLATION = budget_race budget_rollback budget_queue budget_rdp_race budget_rdp_queue budget_pld_race budget_rdp_selection budget_group_race budget_shared_short budget_index_build lookup_index_snapshot prepay_race
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
$(OBJS): $(wildcard src/*/*.h)

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

# error messages: literal format strings, PostgreSQL's message style
.PHONY: check-messages
check-messages:
	python3 test/check-messages.py
