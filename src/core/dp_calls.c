/*-------------------------------------------------------------------------
 *
 * dp_calls.c
 *	  The DP aggregate calls of a query level, and of a plan node: the one
 *	  definition every module uses.
 *
 * Which calls a statement makes decides both what it is priced for and
 * what it evaluates; two walkers that disagreed (one counting an Aggref of
 * a sub-query that belongs to the outer level, the other not; one by
 * equal(), the other by pointer) would price one set of calls and evaluate
 * another.  So every module asks here, and test/check-graph.sh fails when
 * a tree-walker callback of another module tests for DP aggregates itself.
 *
 * Two notions, before and after planning:
 *
 *   - the calls of a query level (a parse tree): the DP Aggrefs of its
 *     target list and HAVING whose agglevelsup points at the level, also
 *     when they sit in a sub-query of it (SQL gives an aggregate whose
 *     arguments are outer columns to the outer level), and not those of
 *     its sub-queries nor of other levels; ORDER BY is in the target list
 *     (resjunk entries), FILTER is part of the Aggref.  Distinct by
 *     equal(), in order of first appearance (target list, then HAVING):
 *     the planner evaluates equal aggregates once (preprocess_aggrefs), a
 *     rewrite makes one column per distinct call.  Not the WHERE, GROUP BY
 *     or FROM, where the parser allows no aggregate of the level.
 *
 *   - the calls of a plan node (an Agg, after planning): every DP Aggref
 *     of its target list and qual, each occurrence, in order.  The
 *     executor evaluates one per aggno (equal Aggrefs share it and
 *     equal() compares aggno), and the registry finds the ticket of the
 *     Aggref the executor hands a final function, which may be any
 *     occurrence; the price counts equal calls of a node once (price.c).
 *
 * A DP window function is never a call: the guard refuses it, and these
 * functions report it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"

#include "catalog.h"
#include "dp_calls.h"

/* Is the node an Aggref of a DP aggregate (any level)? */
bool
dp_is_call(Node *node)
{
	return node != NULL && IsA(node, Aggref) &&
		dp_lookup_call(((Aggref *) node)->aggfnoid) != NULL;
}

static bool
is_window_call(Node *node)
{
	return node != NULL && IsA(node, WindowFunc) &&
		dp_lookup_call(((WindowFunc *) node)->winfnoid) != NULL;
}

/* ---------- a query level ---------- */

typedef struct LevelWalk
{
	Index		sublevels;		/* how deep in sub-queries of the level */
	bool		first_only;		/* stop at the first call */
	List	   *calls;			/* distinct by equal() */
	bool		window;			/* a DP window function of the level */
	bool		other;			/* an aggregate of the level that is not DP */
	bool		outer;			/* an aggregate of an outer level */
} LevelWalk;

static bool
level_walker(Node *node, LevelWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *a = (Aggref *) node;

		if (a->agglevelsup == w->sublevels && dp_is_call(node))
		{
			if (w->first_only)
				return true;
			if (!list_member(w->calls, a))
				w->calls = lappend(w->calls, a);
		}
		else if (a->agglevelsup == w->sublevels)
			w->other = true;
		else if (a->agglevelsup > w->sublevels)
			w->outer = true;
	}
	else if (IsA(node, WindowFunc))
	{
		if (w->sublevels == 0 && is_window_call(node))
			w->window = true;
	}
	else if (IsA(node, Query))
	{
		bool		found;

		w->sublevels++;
		found = query_tree_walker((Query *) node, level_walker, w, 0);
		w->sublevels--;
		return found;
	}
	return expression_tree_walker(node, level_walker, w);
}

static bool
walk_level(Query *q, LevelWalk *w)
{
	return level_walker((Node *) q->targetList, w) ||
		level_walker(q->havingQual, w);
}

/* The DP Aggrefs of query level q, distinct by equal(), in order. */
List *
dp_level_calls(Query *q)
{
	LevelWalk	w = {0};

	(void) walk_level(q, &w);
	return w.calls;
}

/* Does query level q compute DP aggregates? */
bool
dp_level_has_calls(Query *q)
{
	LevelWalk	w = {0, true};

	return walk_level(q, &w);
}

/* Does query level q call a DP aggregate as a window function? */
bool
dp_level_has_window_calls(Query *q)
{
	LevelWalk	w = {0};

	(void) walk_level(q, &w);
	return w.window;
}

/*
 * Does query level q compute aggregates that are not DP (or, with
 * outer_too, hold aggregates of an outer level)?
 */
bool
dp_level_has_other_aggregates(Query *q, bool outer_too)
{
	LevelWalk	w = {0};

	(void) walk_level(q, &w);
	return w.other || (outer_too && w.outer);
}

static bool
expr_walker(Node *node, void *context)
{
	if (node == NULL || IsA(node, Query))
		return false;
	if (dp_is_call(node))
		return true;
	return expression_tree_walker(node, expr_walker, context);
}

/* Does the expression call a DP aggregate, outside its sub-queries? */
bool
dp_expr_has_calls(Node *expr)
{
	return expr_walker(expr, NULL);
}

static bool
tree_walker(Node *node, bool *windows)
{
	if (node == NULL)
		return false;
	if (dp_is_call(node) || (*windows && is_window_call(node)))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, tree_walker, windows, 0);
	return expression_tree_walker(node, tree_walker, windows);
}

/*
 * Does q, at any level (itself, sub-queries, CTEs, sub-selects of FROM),
 * call a DP aggregate?  With windows, as a window function too.
 */
bool
dp_tree_has_calls(Query *q, bool windows)
{
	return query_tree_walker(q, tree_walker, &windows, 0);
}

/* ---------- a plan node ---------- */

typedef struct NodeWalk
{
	List	   *calls;
	bool		window;
} NodeWalk;

static bool
node_walker(Node *node, NodeWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		if (dp_is_call(node))
			w->calls = lappend(w->calls, node);
		return false;			/* aggregates of a plan node do not nest */
	}
	if (is_window_call(node))
		w->window = true;
	return expression_tree_walker(node, node_walker, w);
}

/*
 * The DP Aggrefs of a plan node's target list and qual, every occurrence,
 * in order; *window set if it calls a DP aggregate as a window function.
 */
List *
dp_plan_node_calls(Plan *plan, bool *window)
{
	NodeWalk	w = {NIL, false};

	(void) node_walker((Node *) plan->targetlist, &w);
	(void) node_walker((Node *) plan->qual, &w);
	*window = w.window;
	return w.calls;
}
