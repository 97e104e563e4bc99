/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Shims for the PostgreSQL versions dp_agg builds against (15 to 18).
 *
 * Each shim is named for what it papers over; the code elsewhere uses the
 * names defined here and never tests PG_VERSION_NUM itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_COMPAT_H
#define DP_AGG_COMPAT_H

#include "miscadmin.h"
#include "storage/lock.h"

/* the varlena macros (VARSIZE, VARDATA, ...) left postgres.h for varatt.h in 16 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* the query jumbling header moved from utils/ to nodes/ in 16 */
#if PG_VERSION_NUM >= 160000
#include "nodes/queryjumble.h"
#else
#include "utils/queryjumble.h"
#endif

/* backend ids became 0-based process numbers in 17 (storage/backendid.h went) */
#if PG_VERSION_NUM >= 170000
#define DP_MY_PROC_INDEX() (MyProcNumber)
#else
#include "storage/backendid.h"
#define DP_MY_PROC_INDEX() (MyBackendId - 1)
#endif

/* LockHeldByMe took an "or a stronger mode" argument in 17: we ask for exactly mode */
#if PG_VERSION_NUM >= 170000
#define DP_LOCK_HELD_BY_ME(tag, mode) LockHeldByMe((tag), (mode), false)
#else
#define DP_LOCK_HELD_BY_ME(tag, mode) LockHeldByMe((tag), (mode))
#endif

/* IsBackgroundWorker became a test of the backend type in 17 */
#if PG_VERSION_NUM >= 170000
#define DP_AM_BACKGROUND_WORKER() AmBackgroundWorkerProcess()
#else
#define DP_AM_BACKGROUND_WORKER() (IsBackgroundWorker)
#endif

/* the setting that forces parallel plans was renamed in 16 */
#if PG_VERSION_NUM >= 160000
#define DP_DEBUG_PARALLEL_SETTING "debug_parallel_query"
#else
#define DP_DEBUG_PARALLEL_SETTING "force_parallel_mode"
#endif

/* ExecInsertIndexTuples took an onlySummarizing argument in 16 (false: every index) */
#if PG_VERSION_NUM >= 160000
#define DP_INSERT_INDEX_TUPLES(rri, slot, estate) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, false, NULL, NIL, false)
#else
#define DP_INSERT_INDEX_TUPLES(rri, slot, estate) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, false, NULL, NIL)
#endif

/*
 * An update says which indexes need new entries since 16 (TU_UpdateIndexes:
 * none, only the summarizing ones, or all); a bool before (budget_store.c)
 */
#if PG_VERSION_NUM >= 160000
#define DP_UPDATE_INDEXES_TYPE TU_UpdateIndexes
#define DP_UPDATE_INDEXES_NEEDED(u) ((u) != TU_None)
#define DP_UPDATE_INDEXES_ALL(u) ((u) == TU_All)
#define DP_UPDATE_INDEX_TUPLES(rri, slot, estate, u) \
	ExecInsertIndexTuples((rri), (slot), (estate), true, false, NULL, NIL, (u) == TU_Summarizing)
#else
#define DP_UPDATE_INDEXES_TYPE bool
#define DP_UPDATE_INDEXES_NEEDED(u) (u)
#define DP_UPDATE_INDEXES_ALL(u) (u)
#define DP_UPDATE_INDEX_TUPLES(rri, slot, estate, u) \
	ExecInsertIndexTuples((rri), (slot), (estate), true, false, NULL, NIL)
#endif

/* index_beginscan took the instrumentation of EXPLAIN in 18 (NULL: none) */
#if PG_VERSION_NUM >= 180000
#define DP_INDEX_BEGINSCAN(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#else
#define DP_INDEX_BEGINSCAN(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#endif

/* GROUP BY got a range table entry of its own, RTE_GROUP, in 18 */
#if PG_VERSION_NUM >= 180000
#define DP_HAVE_RTE_GROUP 1
#endif

/* the permission check of a plan's range table changed shape in 16 */
#if PG_VERSION_NUM >= 160000
#define DP_CHECK_PLAN_PERMISSIONS(stmt) \
	ExecCheckPermissions((stmt)->rtable, (stmt)->permInfos, true)
#else
#define DP_CHECK_PLAN_PERMISSIONS(stmt) \
	ExecCheckRTPerms((stmt)->rtable, true)
#endif

/*
 * The executor's permission hook gets the permission infos as a list of
 * their own since 16 (DP_PERMS_HOOK_PARAMS declares the hook's parameters,
 * DP_PERMS_HOOK_ARGS passes them on); the user a relation's permissions are
 * checked as (checkAsUser) moved from RangeTblEntry to RTEPermissionInfo
 * then: DP_RTE_CHECK_AS_USER points to it, NULL if the entry has none.
 */
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#define DP_PERMS_HOOK_PARAMS List *rangeTable, List *rtePermInfos, bool ereport_on_violation
#define DP_PERMS_HOOK_ARGS rangeTable, rtePermInfos, ereport_on_violation
#define DP_RTE_CHECK_AS_USER(stmt, rte) \
	((rte)->perminfoindex == 0 ? NULL : \
	 &getRTEPermissionInfo((stmt)->permInfos, (rte))->checkAsUser)
#else
#define DP_PERMS_HOOK_PARAMS List *rangeTable, bool ereport_on_violation
#define DP_PERMS_HOOK_ARGS rangeTable, ereport_on_violation
#define DP_RTE_CHECK_AS_USER(stmt, rte) (&(rte)->checkAsUser)
#endif

/* the ACL checks of each kind of object became object_aclcheck in 16 */
#if PG_VERSION_NUM >= 160000
#define DP_FUNCTION_ACLCHECK(fn, role) \
	object_aclcheck(ProcedureRelationId, (fn), (role), ACL_EXECUTE)
#else
#define DP_FUNCTION_ACLCHECK(fn, role) pg_proc_aclcheck((fn), (role), ACL_EXECUTE)
#endif

/* InitMaterializedSRF was SetSingleFuncCall before 15.2 */
#if PG_VERSION_NUM < 150002
#define InitMaterializedSRF(fcinfo, flags) SetSingleFuncCall((fcinfo), (flags))
#define MAT_SRF_USE_EXPECTED_DESC SRF_SINGLE_USE_EXPECTED
#endif

/* ExecutorRun lost its execute_once argument in 18 (dist_exec.c) */
#if PG_VERSION_NUM >= 180000
#define DP_EXECUTOR_RUN(qd) ExecutorRun((qd), ForwardScanDirection, 0)
#else
#define DP_EXECUTOR_RUN(qd) ExecutorRun((qd), ForwardScanDirection, 0, true)
#endif

/* ... and the hook's parameters with it (hooks.c) */
#if PG_VERSION_NUM >= 180000
#define DP_RUN_HOOK_PARAMS QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define DP_RUN_HOOK_ARGS queryDesc, direction, count
#else
#define DP_RUN_HOOK_PARAMS QueryDesc *queryDesc, ScanDirection direction, uint64 count, \
	bool execute_once
#define DP_RUN_HOOK_ARGS queryDesc, direction, count, execute_once
#endif

/*
 * pg_attribute_noreturn(), written after a declaration, became the prefix
 * pg_noreturn in 18; gcc and clang take the attribute as a prefix too
 * (protect.h)
 */
#if PG_VERSION_NUM >= 180000
#define DP_NORETURN pg_noreturn
#else
#define DP_NORETURN pg_attribute_noreturn()
#endif

/* the varlena macros left postgres.h in 16 (dist_state.c) */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* the array of all settings: get_guc_variables returns its length itself since 16 */
#if PG_VERSION_NUM >= 160000
#define DP_GUC_VARIABLES(n) get_guc_variables(&(n))
#else
#define DP_GUC_VARIABLES(n) ((n) = GetNumConfigOptions(), get_guc_variables())
#endif

/*
 * get_ordering_op_properties reports the operator's comparison as a
 * CompareType from 18, as a btree strategy number before (protect_guard.c)
 */
#if PG_VERSION_NUM >= 180000
#define DP_ORDERING_KIND CompareType
#else
#define DP_ORDERING_KIND int16
#endif

/*
 * The btree interpretations of an operator became index interpretations in
 * 18, of every index method, with compare types numbered as the btree
 * strategies (bins.c): DP_OP_BTREE_STRATEGIES lists the btree strategy
 * numbers (ints) of the operator, NIL when it has none.
 */
#if PG_VERSION_NUM >= 180000
#include "catalog/pg_am_d.h"
#include "utils/lsyscache.h"
static inline List *
DP_OP_BTREE_STRATEGIES(Oid opno)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, get_op_index_interpretation(opno))
	{
		OpIndexInterpretation *i = lfirst(lc);

		if (get_opfamily_method(i->opfamily_id) == BTREE_AM_OID)
			result = lappend_int(result, (int) i->cmptype);
	}
	return result;
}
#else
#include "utils/lsyscache.h"
static inline List *
DP_OP_BTREE_STRATEGIES(Oid opno)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, get_op_btree_interpretation(opno))
		result = lappend_int(result, ((OpBtreeInterpretation *) lfirst(lc))->strategy);
	return result;
}
#endif

/* a query without LIMIT: LIMIT_OPTION_DEFAULT went in 16 (COUNT, with no count) */
#if PG_VERSION_NUM >= 160000
#define DP_LIMIT_OPTION_NONE LIMIT_OPTION_COUNT
#else
#define DP_LIMIT_OPTION_NONE LIMIT_OPTION_DEFAULT
#endif

/* Vars name the outer joins that can make them NULL (varnullingrels) since 16 */
#if PG_VERSION_NUM >= 160000
#define DP_CLEAR_NULLINGRELS(var) ((var)->varnullingrels = NULL)
#else
#define DP_CLEAR_NULLINGRELS(var) ((void) (var))
#endif

/*
 * The compiled CHECK constraints of a result relation (budget_store.c,
 * charger.c): ri_ConstraintExprs became ri_CheckConstraintExprs in 18
 */
/* is a CHECK constraint enforced (NOT ENFORCED constraints, PostgreSQL 18)? */
#if PG_VERSION_NUM >= 180000
#define DP_CHECK_ENFORCED(check) ((check)->ccenforced)
#else
#define DP_CHECK_ENFORCED(check) true
#endif

#if PG_VERSION_NUM >= 180000
#define DP_RRI_CHECK_EXPRS(rri) ((rri)->ri_CheckConstraintExprs)
#else
#define DP_RRI_CHECK_EXPRS(rri) ((rri)->ri_ConstraintExprs)
#endif

/* 16 moved permission checks from range table entries to rteperminfos */
#if PG_VERSION_NUM >= 160000
#define DP_HAVE_RTEPERMINFO 1
#endif

/* ... and with them the columns a query reads of a relation (dist_access.c) */
#if PG_VERSION_NUM >= 160000
#define DP_QUERY_RTE_SELECTED_COLS(query, rte) \
	((rte)->perminfoindex == 0 ? NULL : \
	 getRTEPermissionInfo((query)->rteperminfos, (rte))->selectedCols)
#else
#define DP_QUERY_RTE_SELECTED_COLS(query, rte) ((rte)->selectedCols)
#endif

/* the subtransaction that gave a relation its current file: relfilenode became relfilelocator in 16 */
#if PG_VERSION_NUM >= 160000
#define DP_REL_NEW_FILE_SUBID(rel) ((rel)->rd_firstRelfilelocatorSubid)
#else
#define DP_REL_NEW_FILE_SUBID(rel) ((rel)->rd_firstRelfilenodeSubid)
#endif

/* ExtendBufferedRel, which takes the extension lock itself, came in 16 (15: P_NEW under the lock) */
#if PG_VERSION_NUM >= 160000
#define DP_HAVE_EXTEND_BUFFERED_REL 1
#endif

#endif							/* DP_AGG_COMPAT_H */
