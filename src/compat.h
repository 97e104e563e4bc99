/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Shims for the PostgreSQL versions dp_agg builds against (13 to 17).
 *
 * Each shim is named for what it papers over; the code elsewhere uses the
 * names defined here and never tests PG_VERSION_NUM itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_COMPAT_H
#define DP_AGG_COMPAT_H

#include "miscadmin.h"
#include "storage/backendid.h"

/* GUC prefix reservation was called EmitWarningsOnPlaceholders before 15 */
#if PG_VERSION_NUM < 150000
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

/* shared memory must be requested from shmem_request_hook since 15 */
#if PG_VERSION_NUM >= 150000
#define DP_HAVE_SHMEM_REQUEST_HOOK 1
#endif

/* index of this process among the backend slots, 0-based */
#if PG_VERSION_NUM >= 170000
#define DP_MY_PROC_INDEX() (MyProcNumber)
#else
#define DP_MY_PROC_INDEX() (MyBackendId - 1)
#endif

/* parse analysis with fixed parameter types was renamed in 15 */
#if PG_VERSION_NUM < 150000
#define pg_analyze_and_rewrite_fixedparams(raw, text, types, n, env) \
	pg_analyze_and_rewrite((raw), (text), (types), (n), (env))
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

/* InitMaterializedSRF was SetSingleFuncCall before 15.2, absent before 15 */
#if PG_VERSION_NUM < 150002
#define InitMaterializedSRF(fcinfo, flags) SetSingleFuncCall((fcinfo), (flags))
#define MAT_SRF_USE_EXPECTED_DESC SRF_SINGLE_USE_EXPECTED
#endif

#endif							/* DP_AGG_COMPAT_H */
