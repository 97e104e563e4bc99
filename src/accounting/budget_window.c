/*-------------------------------------------------------------------------
 *
 * budget_window.c
 *	  The windows of renewing budgets: which window an instant falls in,
 *	  aligned to the wall clock of a time zone the DBA chooses, and the SQL
 *	  functions dp_agg_internal.window_start and dp_agg_internal.window_end.
 *
 * A budget with a window renews: what it has spent counts in the window
 * it was charged in, and its composition starts again from nothing in the
 * next one (charger.c).  A window length is one of
 *	 whole months	'1 month', '3 months', '1 year': windows start at local
 *					midnight on the first of a month, counted from January
 *					2000 ('3 months' are quarters, '12 months' years);
 *	 whole days		'1 day', '1 week', '10 days': windows start at local
 *					midnight, counted from Monday 3 January 2000 (weeks
 *					start on Mondays);
 *	 part of a day	'1 hour', '15 minutes', '2 seconds': a duration of at
 *					least a second that divides 24 hours; windows are
 *					counted from each local midnight, in elapsed time, so
 *					that on the days the clocks change the last window of
 *					the day is shorter or longer than the others.
 * Mixed lengths ('1 day 2 hours') are refused: they align to nothing.
 * "Local" is the wall clock of the time zone, read and converted as AT
 * TIME ZONE converts with a full zone name ('Europe/Paris') or a POSIX
 * specification, from PostgreSQL's time zone library (pg_tzset).
 * Abbreviations are refused: AT TIME ZONE reads them from the session's
 * timezone_abbreviations ('IST' is Israel's in one session, India's in
 * another), so the charger and the DBA who set the window could place the
 * same instant in different windows, and a window moved back renews what
 * was spent.
 *
 * Every instant falls in exactly one window [start, end), start <= at <
 * end, and window starts never decrease as the instant grows: a local
 * midnight that the clock repeats or skips is placed by timestamp_zone,
 * and if that puts a window's start after the instant asked about, the
 * window before is taken.  A window is never shorter than the elapsed time
 * its wall-clock length spans, but for the transitions of the clock
 * (longer never matters: one window's budget then covers more time, which
 * errs on the side of privacy).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"

#include "budget_window.h"

PG_FUNCTION_INFO_V1(dp_window_start_sql);
PG_FUNCTION_INFO_V1(dp_window_end_sql);

/* day windows count from this Monday, month windows from its month */
#define ANCHOR_YEAR 2000
#define ANCHOR_MONTH 1
#define ANCHOR_DAY 3

/* a ÷ b rounded towards minus infinity (b > 0) */
static int64
floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	if (a % b != 0 && a < 0)
		q--;
	return q;
}

/*
 * Refuse a window length that is not positive whole months, positive whole
 * days, or a part of a day of at least a second that divides it.
 */
void
dp_window_check(const Interval *length)
{
	if (length->month < 0 || length->day < 0 || length->time < 0 ||
		(length->month == 0 && length->day == 0 && length->time == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a budget window must be a positive length of time"),
				 errhint("Give a length such as '1 day', '1 week' or '1 month'.")));
	if ((length->month > 0 && (length->day > 0 || length->time > 0)) ||
		(length->day > 0 && length->time > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a budget window must be whole months, whole days or a part of a day"),
				 errdetail("Windows are aligned to the calendar: a length that mixes months, days "
						   "and hours aligns to nothing."),
				 errhint("Give a length such as '1 month', '1 week', '1 day' or '6 hours'.")));
	if (length->month == 0 && length->day == 0 &&
		(length->time < USECS_PER_SEC || USECS_PER_DAY % length->time != 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a budget window shorter than a day must be at least a second and divide 24 hours"),
				 errdetail("Such windows are counted from each local midnight."),
				 errhint("Give a length such as '1 hour', '15 minutes' or '1 day'.")));
}

static void
out_of_range(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("budget window out of range")));
}

/*
 * The time zone of a budget's windows: a full name or a POSIX
 * specification, never an abbreviation (above).
 */
static pg_tz *
window_zone(const char *time_zone)
{
	pg_tz	   *tz = pg_tzset(time_zone);

	if (tz == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time zone \"%s\" is not a time zone name", time_zone),
				 errdetail("Budget windows take a full time zone name or a POSIX specification; "
						   "an abbreviation means different zones under different settings of "
						   "timezone_abbreviations."),
				 errhint("Give a name from pg_timezone_names, such as 'UTC', 'Europe/Paris' or "
						 "'Asia/Kolkata'.")));
	return tz;
}

/*
 * The instant of local midnight of Julian day jday in the time zone, as
 * timestamp_zone (AT TIME ZONE of a timestamp) gives it for a full name
 */
static TimestampTz
local_midnight(pg_tz *zone, int jday)
{
	struct pg_tm tm;
	TimestampTz result;
	int			offset;

	memset(&tm, 0, sizeof(tm));
	j2date(jday, &tm.tm_year, &tm.tm_mon, &tm.tm_mday);
	offset = DetermineTimeZoneOffset(&tm, zone);
	if (tm2timestamp(&tm, 0, &offset, &result) != 0 || !IS_VALID_TIMESTAMP(result))
		out_of_range();
	return result;
}

/*
 * The Julian day of the first of the month m months after the anchor's;
 * out of range (an ERROR) beyond the years of timestamps, where date2j's
 * 32-bit arithmetic would wrap (a window of '141111000 months' ended in
 * 2028 instead of millions of years later)
 */
static int
month_day(int64 m)
{
	int64		year = ANCHOR_YEAR + floor_div(m, MONTHS_PER_YEAR);

	if (year < -4713 || year > 294277)
		out_of_range();
	return date2j((int) year, (int) (m - floor_div(m, MONTHS_PER_YEAR) * MONTHS_PER_YEAR) + 1, 1);
}

/* the Julian day anchor + n days, out of range beyond the days of timestamps */
static int
anchored_day(int64 n)
{
	int64		j = (int64) date2j(ANCHOR_YEAR, ANCHOR_MONTH, ANCHOR_DAY) + n;

	if (j < 0 || j > (int64) date2j(294277, 1, 1))
		out_of_range();
	return (int) j;
}

/* the first and the day after the last local day of period p */
static void
period_days(const Interval *length, int64 p, int *first, int *next)
{
	if (length->month > 0)
	{
		*first = month_day(p * length->month);
		*next = month_day((p + 1) * length->month);
	}
	else if (length->day > 0)
	{
		*first = anchored_day(p * length->day);
		*next = anchored_day((p + 1) * length->day);
	}
	else
	{
		*first = (int) p;		/* parts of a day: the period is the day */
		*next = *first + 1;
	}
}

/*
 * The window [*start, *end) of a budget whose windows have this length in
 * this time zone that the instant at falls in.
 */
void
dp_window_bounds(const Interval *length, const char *time_zone, TimestampTz at,
				 TimestampTz *start, TimestampTz *end)
{
	pg_tz	   *zone = window_zone(time_zone);
	struct pg_tm tm;
	fsec_t		fsec;
	int			offset;
	int			jday;
	int64		p;
	int			first,
				next;
	TimestampTz s,
				e;

	dp_window_check(length);
	if (TIMESTAMP_NOT_FINITE(at))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("an infinite instant has no budget window")));
	/* the local wall clock at the instant, as timestamptz_zone reads it */
	if (timestamp2tm(at, &offset, &tm, &fsec, NULL, zone) != 0)
		out_of_range();
	jday = date2j(tm.tm_year, tm.tm_mon, tm.tm_mday);
	if (length->month > 0)
		p = floor_div((int64) (tm.tm_year - ANCHOR_YEAR) * MONTHS_PER_YEAR + (tm.tm_mon - ANCHOR_MONTH),
					  length->month);
	else if (length->day > 0)
		p = floor_div(jday - date2j(ANCHOR_YEAR, ANCHOR_MONTH, ANCHOR_DAY), length->day);
	else
		p = jday;

	/*
	 * The local midnights that bound the period; where the clock repeats
	 * or skips midnight, the period before or after may be the one that
	 * holds the instant
	 */
	for (int tries = 0;; tries++)
	{
		period_days(length, p, &first, &next);
		s = local_midnight(zone, first);
		e = local_midnight(zone, next);
		if (tries < 2 && s > at)
			p--;
		else if (tries < 2 && e <= at)
			p++;
		else
			break;
	}
	if (s > at || e <= at)
		elog(ERROR, "dp_agg: no budget window holds the instant");

	if (length->month == 0 && length->day == 0)
	{
		int64		k = floor_div(at - s, length->time);

		s += k * length->time;
		e = Min(s + length->time, e);
	}
	*start = s;
	*end = e;
}

static void
window_args(FunctionCallInfo fcinfo, TimestampTz *start, TimestampTz *end)
{
	Interval   *length = PG_GETARG_INTERVAL_P(0);
	char	   *zone = text_to_cstring(PG_GETARG_TEXT_PP(1));
	TimestampTz at = PG_GETARG_TIMESTAMPTZ(2);

	if (strlen(zone) > DP_WINDOW_TZ_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time zone name is too long"),
				 errdetail("A budget's time zone has at most %d bytes.", DP_WINDOW_TZ_MAX)));
	dp_window_bounds(length, zone, at, start, end);
}

/* dp_agg_internal.window_start(length interval, time_zone text, at timestamptz) */
Datum
dp_window_start_sql(PG_FUNCTION_ARGS)
{
	TimestampTz start,
				end;

	window_args(fcinfo, &start, &end);
	PG_RETURN_TIMESTAMPTZ(start);
}

/* dp_agg_internal.window_end(length interval, time_zone text, at timestamptz) */
Datum
dp_window_end_sql(PG_FUNCTION_ARGS)
{
	TimestampTz start,
				end;

	window_args(fcinfo, &start, &end);
	PG_RETURN_TIMESTAMPTZ(end);
}
