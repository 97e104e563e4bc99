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

/* the setting that forces parallel plans was renamed in 16 */
#if PG_VERSION_NUM >= 160000
#define DP_DEBUG_PARALLEL_SETTING "debug_parallel_query"
#else
#define DP_DEBUG_PARALLEL_SETTING "force_parallel_mode"
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

/* ExecutorRun_hook lost its execute_once argument in 18 */
#if PG_VERSION_NUM >= 180000
#define DP_EXECUTOR_RUN_PARAMS QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define DP_EXECUTOR_RUN_ARGS queryDesc, direction, count
#else
#define DP_EXECUTOR_RUN_PARAMS QueryDesc *queryDesc, ScanDirection direction, uint64 count, \
	bool execute_once
#define DP_EXECUTOR_RUN_ARGS queryDesc, direction, count, execute_once
#endif

/* get_ordering_op_properties reports a CompareType, not a btree strategy, since 18 */
#if PG_VERSION_NUM >= 180000
#define DP_ORDERING_STRATEGY CompareType
#else
#define DP_ORDERING_STRATEGY int16
#endif

/* the permission to call a function: object_aclcheck replaced pg_proc_aclcheck in 16 */
#if PG_VERSION_NUM >= 160000
#define DP_FUNCTION_ACLCHECK(funcid, roleid) \
	object_aclcheck(ProcedureRelationId, (funcid), (roleid), ACL_EXECUTE)
#else
#define DP_FUNCTION_ACLCHECK(funcid, roleid) \
	pg_proc_aclcheck((funcid), (roleid), ACL_EXECUTE)
#endif

/* 16 moved permission checks from range table entries to rteperminfos */
#if PG_VERSION_NUM >= 160000
#define DP_HAVE_RTEPERMINFO 1
#endif

#endif							/* DP_AGG_COMPAT_H */
