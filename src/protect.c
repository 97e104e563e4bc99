/*-------------------------------------------------------------------------
 *
 * protect.c
 *	  Protected relations: which are, who may read them, who is trusted.
 *
 * A role is trusted for a relation when it is a superuser or has the
 * privileges of the relation's owner (README, "Protected tables"): such a
 * role could read the rows anyway, by changing the protection.  Every
 * other role is untrusted, whatever it was granted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "catalog/pg_class.h"
#include "utils/acl.h"
#include "utils/syscache.h"

#include "protect.h"

/* The owner of a relation; InvalidOid if it does not exist. */
Oid
dp_relation_owner(Oid relid)
{
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/* Is the role a superuser or does it have the privileges of the owner? */
bool
dp_role_trusted(Oid relid, Oid roleid)
{
	Oid			owner;

	if (superuser_arg(roleid))
		return true;
	owner = dp_relation_owner(relid);
	return OidIsValid(owner) && has_privs_of_role(roleid, owner);
}
