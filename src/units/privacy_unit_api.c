/*-------------------------------------------------------------------------
 *
 * privacy_unit_api.c
 *	  dp_agg.set_privacy_unit, dp_agg.clear_privacy_unit and the trigger of
 *	  the catalog dp_agg.privacy_unit.
 *
 * doc/units-and-groups.md, "Privacy units".  The functions need EXECUTE
 * (revoked from PUBLIC) and the caller must have the privileges of the
 * relation's owner (or be a superuser), as for protect.c; they write the
 * catalog as its owner.  The trigger tells every backend, at commit, to plan
 * again (privacy_unit.c): no plan made under old units runs under new ones.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "guc.h"
#include "protect.h"

PG_FUNCTION_INFO_V1(dp_set_privacy_unit);
PG_FUNCTION_INFO_V1(dp_clear_privacy_unit);
PG_FUNCTION_INFO_V1(dp_privacy_unit_changed);

#define SQL_SET_UNIT \
	"INSERT INTO dp_agg.privacy_unit (relation, unit_column, max_groups_contributed) " \
	"VALUES ($1, $2, $3) ON CONFLICT (relation) DO UPDATE SET " \
	"unit_column = EXCLUDED.unit_column, " \
	"max_groups_contributed = EXCLUDED.max_groups_contributed, set_at = pg_catalog.now()"
#define SQL_CLEAR_UNIT \
	"DELETE FROM dp_agg.privacy_unit WHERE relation OPERATOR(pg_catalog.=) $1"

/* The relation argument: it must exist and the caller must be trusted for it. */
static Oid
relation_arg(FunctionCallInfo fcinfo)
{
	Oid			relid;
	char		relkind;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be NULL")));
	relid = PG_GETARG_OID(0);
	relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!dp_role_trusted(relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set the privacy unit of relation \"%s\"",
						get_rel_name(relid)),
				 errdetail("Only superusers and roles with the privileges of the relation's owner may set or clear its privacy unit.")));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot set the privacy unit of relation \"%s\"", get_rel_name(relid)),
				 errdetail("Only tables, partitioned tables and materialized views have privacy units."),
				 errhint("Set the privacy unit of the table that the view reads.")));
	return relid;
}

/*
 * dp_agg.set_privacy_unit(relation regclass, unit_column name,
 * max_groups_contributed integer DEFAULT 1) returns void
 */
Datum
dp_set_privacy_unit(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo);
	Oid			argtypes[3] = {REGCLASSOID, NAMEOID, INT4OID};
	Datum		values[3];
	char	   *column;
	AttrNumber	attno;
	int32		k;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("unit_column and max_groups_contributed must not be NULL")));
	column = NameStr(*PG_GETARG_NAME(1));
	k = PG_GETARG_INT32(2);
	attno = get_attnum(relid, column);
	if (attno == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						column, get_rel_name(relid))));
	if (attno < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("system column \"%s\" cannot be a privacy unit", column),
				 errdetail("A privacy unit is a column whose value says whose row it is.")));
	if (k < 1 || k > DP_MAX_UNIT_BOUND)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_groups_contributed must be between 1 and %d", DP_MAX_UNIT_BOUND),
				 errdetail("max_groups_contributed is %d.", k),
				 errhint("It is how many groups of a statement one unit may contribute to; the noise grows with it.")));
	values[0] = ObjectIdGetDatum(relid);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = Int32GetDatum(k);
	dp_catalog_execute("privacy_unit", SQL_SET_UNIT, 3, argtypes, values);
	PG_RETURN_VOID();
}

/* dp_agg.clear_privacy_unit(relation regclass) returns boolean */
Datum
dp_clear_privacy_unit(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo);
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	PG_RETURN_BOOL(dp_catalog_execute("privacy_unit", SQL_CLEAR_UNIT, 1, argtypes, values) > 0);
}

/* trigger dp_agg_internal.privacy_unit_changed: every backend plans again */
Datum
dp_privacy_unit_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function dp_agg_internal.privacy_unit_changed must be called as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}
