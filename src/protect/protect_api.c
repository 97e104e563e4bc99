/*-------------------------------------------------------------------------
 *
 * protect_api.c
 *	  dp_agg.protect, unprotect, grant_access, revoke_access, the
 *	  trigger that announces changes of their catalogs, and
 *	  dp_agg.resolve_allowed_function.
 *
 * The callers need EXECUTE (revoked from PUBLIC) and must be trusted for
 * the relation: a superuser or a role with the privileges of its owner
 * (protect.c).  The catalogs dp_agg.protected and dp_agg.access are
 * readable by nobody else, so the functions write them as the owner of
 * the catalogs, the way a SECURITY DEFINER function would, but after
 * checking the caller's own user.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "access/htup_details.h"
#include "miscadmin.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "dist_catalog.h"
#include "dist_protect.h"
#include "guc.h"
#include "protect.h"
#include "protect_api.h"

PG_FUNCTION_INFO_V1(dp_protect);
PG_FUNCTION_INFO_V1(dp_unprotect);
PG_FUNCTION_INFO_V1(dp_grant_access);
PG_FUNCTION_INFO_V1(dp_revoke_access);
PG_FUNCTION_INFO_V1(dp_protect_changed);
PG_FUNCTION_INFO_V1(dp_resolve_allowed_function);

#define SQL_PROTECT \
	"INSERT INTO dp_agg.protected (relation) VALUES ($1) ON CONFLICT DO NOTHING"
#define SQL_UNPROTECT \
	"DELETE FROM dp_agg.protected WHERE relation OPERATOR(pg_catalog.=) $1"
#define SQL_IS_PROTECTED \
	"SELECT 1 FROM dp_agg.protected WHERE relation OPERATOR(pg_catalog.=) $1"
#define SQL_GRANT \
	"INSERT INTO dp_agg.access (relation, role) VALUES ($1, $2) ON CONFLICT DO NOTHING"
#define SQL_REVOKE \
	"DELETE FROM dp_agg.access WHERE relation OPERATOR(pg_catalog.=) $1 " \
	"AND role OPERATOR(pg_catalog.=) $2"

/* The argument argno, which must not be NULL. */
static Oid
oid_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", name)));
	return PG_GETARG_OID(argno);
}

/*
 * The relation argument: it must exist and the current user must be
 * trusted for it.  With must_be_protectable, it must also be a relation
 * that can be protected.
 */
static Oid
relation_arg(FunctionCallInfo fcinfo, bool must_be_protectable)
{
	Oid			relid = oid_arg(fcinfo, 0, "relation");
	HeapTuple	tup;
	Form_pg_class rel;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	rel = (Form_pg_class) GETSTRUCT(tup);
	if (must_be_protectable)
	{
		if (rel->relkind != RELKIND_RELATION &&
			rel->relkind != RELKIND_PARTITIONED_TABLE &&
			rel->relkind != RELKIND_MATVIEW)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("cannot protect relation \"%s\"", NameStr(rel->relname)),
					 errdetail("Only tables, partitioned tables and materialized views can be protected."),
					 errhint("Protect the tables that it reads.")));
		if (IsSystemClass(relid, rel))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("cannot protect system relation \"%s\"", NameStr(rel->relname)),
					 errdetail("System catalogs are read by the server itself.")));
		if (rel->relpersistence == RELPERSISTENCE_TEMP)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("cannot protect temporary relation \"%s\"", NameStr(rel->relname)),
					 errdetail("A temporary relation belongs to one session and disappears with it.")));
	}
	if (!dp_role_trusted(relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to administer the protection of relation \"%s\"",
						NameStr(rel->relname)),
				 errdetail("Only superusers and roles with the privileges of the relation's owner may protect it, unprotect it or grant access to it.")));
	ReleaseSysCache(tup);
	return relid;
}

/* The role argument; with must_exist, it must be an existing role. */
static Oid
role_arg(FunctionCallInfo fcinfo, bool must_exist)
{
	Oid			roleid = oid_arg(fcinfo, 1, "role");

	if (must_exist && !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(roleid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role with OID %u does not exist", roleid)));
	return roleid;
}

/*
 * Run one statement of the catalogs, with parameters relation (and role),
 * as the owner of dp_agg.protected; the number of rows it processed.
 */
static uint64
run_as_catalog_owner(const char *sql, Oid relid, Oid roleid)
{
	Oid			argtypes[2] = {REGCLASSOID, REGROLEOID};
	Datum		values[2] = {ObjectIdGetDatum(relid), ObjectIdGetDatum(roleid)};

	return dp_catalog_execute("protected", sql, OidIsValid(roleid) ? 2 : 1, argtypes, values);
}

/*
 * On a Citus cluster, the coordinator protects: a worker learns it from the
 * coordinator (dist_protect.c), and its own catalogs would not reach the
 * coordinator or the other nodes.
 */
static void
not_on_worker(Oid relid)
{
	if (dp_guc_citus_worker && dp_is_citus_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the protection of Citus table \"%s\" is administered on the coordinator",
						get_rel_name(relid)),
				 errdetail("The coordinator enforces it and tells every worker."),
				 errhint("Connect to the coordinator.")));
}

/*
 * dp_agg.protect(relation regclass) returns boolean.  On a Citus cluster
 * the table also gets dp_agg's security label, which Citus carries to the
 * workers (dist_protect.c); it is set even if the table already was
 * protected (by a version that did not label it).
 */
Datum
dp_protect(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo, true);
	bool		added;

	not_on_worker(relid);
	added = run_as_catalog_owner(SQL_PROTECT, relid, InvalidOid) > 0;
	dp_dist_set_label(relid, true);
	PG_RETURN_BOOL(added);
}

/* dp_agg.unprotect(relation regclass) returns boolean */
Datum
dp_unprotect(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo, false);
	bool		removed;

	not_on_worker(relid);
	removed = run_as_catalog_owner(SQL_UNPROTECT, relid, InvalidOid) > 0;
	if (dp_dist_labeled(relid))
	{
		dp_dist_set_label(relid, false);
		removed = true;
	}
	PG_RETURN_BOOL(removed);
}

/* dp_agg.grant_access(relation regclass, role regrole) returns boolean */
Datum
dp_grant_access(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo, false);
	Oid			roleid = role_arg(fcinfo, true);

	if (run_as_catalog_owner(SQL_IS_PROTECTED, relid, InvalidOid) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("relation \"%s\" is not protected", get_rel_name(relid)),
				 errdetail("Access is granted to protected relations only."),
				 errhint("Protect it first with dp_agg.protect.")));
	PG_RETURN_BOOL(run_as_catalog_owner(SQL_GRANT, relid, roleid) > 0);
}

/*
 * dp_agg.revoke_access(relation regclass, role regrole) returns boolean;
 * the role need not exist any more.
 */
Datum
dp_revoke_access(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo, false);
	Oid			roleid = role_arg(fcinfo, false);

	PG_RETURN_BOOL(run_as_catalog_owner(SQL_REVOKE, relid, roleid) > 0);
}

/*
 * Trigger dp_agg_internal.protect_changed on both catalogs: at commit every backend
 * drops what it cached of them (protect.c).
 */
Datum
dp_protect_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function dp_agg_internal.protect_changed must be called as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}

/*
 * dp_agg.resolve_allowed_function(signature text) returns regprocedure: the
 * function an entry of dp_agg.allowed_function names, as the guard
 * resolves it (protect.c); NULL if it names none.
 */
Datum
dp_resolve_allowed_function(PG_FUNCTION_ARGS)
{
	Oid			funcid = dp_allowed_function_oid(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	if (!OidIsValid(funcid))
		PG_RETURN_NULL();
	PG_RETURN_OID(funcid);
}
