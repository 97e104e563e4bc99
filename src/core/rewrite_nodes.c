/*-------------------------------------------------------------------------
 *
 * rewrite_nodes.c
 *	  The query nodes dp_agg's rewrites build: a SELECT, a sub-query in
 *	  a range table.
 *
 * The rewrites of privacy units (privacy_unit.c), of public domains
 * (domain_rows.c) and of top-k (top_k.c) wrap a query level in new levels
 * that read it as a sub-query.  They build those levels and range table
 * entries the same way, as the parser would for the SQL they stand for;
 * this is that one way.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"

#include "rewrite_nodes.h"

/* an empty SELECT, as parse analysis starts one */
Query *
dp_new_select(void)
{
	Query	   *q = makeNode(Query);

	q->commandType = CMD_SELECT;
	q->querySource = QSRC_PARSER;
	q->canSetTag = true;
	return q;
}

/*
 * The range table entry of sub-query sub, named name, its columns named as
 * its target list; in_from: it is an item of the FROM clause (a sub-query
 * of a UNION's branches is not)
 */
RangeTblEntry *
dp_subquery_rte(Query *sub, const char *name, bool in_from)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	List	   *colnames = NIL;
	ListCell   *lc;

	foreach(lc, sub->targetList)
		colnames = lappend(colnames, makeString(pstrdup(lfirst_node(TargetEntry, lc)->resname)));
	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = sub;
	rte->alias = makeAlias(name, NIL);
	rte->eref = makeAlias(name, colnames);
	rte->inFromCl = in_from;
	return rte;
}
