/*-------------------------------------------------------------------------
 *
 * domain_api.c
 *	  dp_agg.set_public_domain, dp_agg.clear_public_domain and the trigger
 *	  of the catalog dp_agg.public_domain.
 *
 * doc/units-and-groups.md, "Public group keys".  A DBA declares the keys that
 * a column or an expression of a relation's columns can take; DP statements
 * that group the relation's rows by it release every one of them
 * (public_domain.c).  The functions need EXECUTE (revoked from PUBLIC) and the
 * caller must be trusted for the relation (protect.c), as for privacy units;
 * they write the catalog as its owner.  The keys are checked (of the key's
 * type, or assignable to it; none repeated; a type a key set can hold) and
 * stored as text under fixed settings (domain_catalog.c).  The trigger tells
 * every backend, at commit, to plan again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"

#include "domain_catalog.h"
#include "guc.h"
#include "keyset.h"
#include "protect.h"

PG_FUNCTION_INFO_V1(dp_set_public_domain);
PG_FUNCTION_INFO_V1(dp_clear_public_domain);
PG_FUNCTION_INFO_V1(dp_public_domain_changed);

#define SQL_SET_DOMAIN \
	"INSERT INTO dp_agg.public_domain (relation, key, key_type, keys) " \
	"VALUES ($1, $2, $3, $4) ON CONFLICT (relation, key) DO UPDATE SET " \
	"key_type = EXCLUDED.key_type, keys = EXCLUDED.keys, set_at = pg_catalog.now()"
#define SQL_CLEAR_DOMAIN \
	"DELETE FROM dp_agg.public_domain WHERE relation OPERATOR(pg_catalog.=) $1 " \
	"AND key OPERATOR(pg_catalog.=) $2"

/* The relation argument: it must exist and the caller must be trusted for it. */
static Oid
relation_arg(FunctionCallInfo fcinfo)
{
	Oid			relid;
	char		relkind;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation and key must not be NULL")));
	relid = PG_GETARG_OID(0);
	relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!dp_role_trusted(relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to declare a public domain of relation \"%s\"",
						get_rel_name(relid)),
				 errdetail("Only superusers and roles with the privileges of the relation's owner may declare or clear its public domains.")));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot declare a public domain of relation \"%s\"", get_rel_name(relid)),
				 errdetail("Only tables, partitioned tables and materialized views have public domains."),
				 errhint("Declare the public domain of the table that the view reads.")));
	return relid;
}

/* the keys as an array of the key's type (assignment casts allowed) */
static ArrayType *
keys_of_type(Datum keys, Oid arraytype, Node *key, const char *keytext)
{
	Oid			type = exprType(key);
	Oid			target = get_array_type(type);
	Node	   *c;

	if (!OidIsValid(target))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the keys of type %s have no array type", format_type_be(type))));
	c = (Node *) makeConst(arraytype, -1, InvalidOid, -1, keys, false, false);
	if (arraytype != target)
	{
		c = coerce_to_target_type(NULL, c, arraytype, target, exprTypmod(key),
								  COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
		if (c != NULL)
			c = eval_const_expressions(NULL, c);
		if (c == NULL || !IsA(c, Const))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("keys of type %s cannot be keys of \"%s\", of type %s",
							format_type_be(get_element_type(arraytype)), keytext,
							format_type_be(type)),
					 errhint("Give an array of %s.", format_type_be(type))));
	}
	return DatumGetArrayTypeP(((Const *) c)->constvalue);
}

/*
 * dp_agg.set_public_domain(relation regclass, key text, keys anyarray)
 * returns integer: the number of keys declared
 */
Datum
dp_set_public_domain(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo);
	char	   *keytext;
	Node	   *key;
	Oid			type;
	ArrayType  *a;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	DpKeysetColumn col;
	DpKeysetBuilder *b;
	int			dup;
	Datum	   *texts;
	Oid			output;
	bool		varlena;
	int			level;
	Oid			argtypes[4] = {REGCLASSOID, TEXTOID, REGTYPEOID, TEXTARRAYOID};
	Datum		values[4];

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("keys must not be NULL")));
	keytext = text_to_cstring(PG_GETARG_TEXT_PP(1));
	key = dp_domain_parse_key(relid, keytext);
	type = exprType(key);
	if (!dp_keyset_type_ok(type, exprCollation(key)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("keys of type %s cannot have a public domain", format_type_be(type)),
				 errdetail("A key of a public domain needs binary send and receive functions, a default hash operator class, and a deterministic collation.")));
	a = keys_of_type(PG_GETARG_DATUM(2), get_fn_expr_argtype(fcinfo->flinfo, 2), key, keytext);
	get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
	deconstruct_array(a, type, typlen, typbyval, typalign, &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a public domain needs at least one key")));
	if (n > DP_KEYSET_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a public domain has at most %d keys", DP_KEYSET_MAX_KEYS)));

	/* no key twice: a row would be in one group, but the key released twice */
	col.type = type;
	col.typmod = exprTypmod(key);
	col.collation = exprCollation(key);
	b = dp_keyset_begin(1, 1, &col);
	for (int i = 0; i < n; i++)
		dp_keyset_add(b, &elems[i], &nulls[i]);
	(void) dp_keyset_finish(b, &dup);

	getTypeOutputInfo(type, &output, &varlena);
	texts = palloc(sizeof(Datum) * n);
	level = dp_domain_settings_enter();
	for (int i = 0; i < n; i++)
		texts[i] = nulls[i] ? (Datum) 0
			: CStringGetTextDatum(OidOutputFunctionCall(output, elems[i]));
	dp_domain_settings_leave(level);
	if (dup >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key %s is listed twice",
						nulls[dup] ? "NULL" : quote_literal_cstr(TextDatumGetCString(texts[dup]))),
				 errdetail("Each key of a public domain is one group.")));

	values[0] = ObjectIdGetDatum(relid);
	values[1] = CStringGetTextDatum(keytext);
	values[2] = ObjectIdGetDatum(type);
	{
		int			dims[1] = {n};
		int			lbs[1] = {1};

		values[3] = PointerGetDatum(construct_md_array(texts, nulls, 1, dims, lbs, TEXTOID,
													   -1, false, TYPALIGN_INT));
	}
	dp_catalog_execute("public_domain", SQL_SET_DOMAIN, 4, argtypes, values);
	PG_RETURN_INT32(n);
}

/* dp_agg.clear_public_domain(relation regclass, key text) returns boolean */
Datum
dp_clear_public_domain(PG_FUNCTION_ARGS)
{
	Oid			relid = relation_arg(fcinfo);
	Oid			argtypes[2] = {REGCLASSOID, TEXTOID};
	Datum		values[2] = {ObjectIdGetDatum(relid), PG_GETARG_DATUM(1)};

	PG_RETURN_BOOL(dp_catalog_execute("public_domain", SQL_CLEAR_DOMAIN, 2, argtypes, values) > 0);
}

/* trigger dp_agg_internal.public_domain_changed: every backend plans again */
Datum
dp_public_domain_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function dp_agg_internal.public_domain_changed must be called as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}
