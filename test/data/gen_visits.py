#!/usr/bin/env python3
"""Generate test/data/visits.csv: made-up hospital visits for the dp_agg demo.

Deterministic (fixed seed, Python 3 standard library only): running it again
rewrites the same file byte for byte.  Nothing in it describes real people.

    python3 test/data/gen_visits.py            # writes visits.csv beside it
    python3 test/data/gen_visits.py -o FILE    # or elsewhere

Columns (see visits.sql for the table):
    visit_id        integer           1..N, unique
    patient_id      bigint            a patient may visit more than once
    visit_date      date              in 2024
    region          text              5 regions, unevenly sized
    department      text              7 departments
    age             integer           0..99, depends on the department
    stay_days       real              length of stay; NULL while still admitted
    wait_minutes    double precision  triage wait; NULL when not recorded
    cost            numeric(10,2)     bill in dollars; NULL while billing is pending
"""
import argparse
import csv
import datetime
import math
import os
import random

SEED = 20240601
ROWS = 4000

REGIONS = [("North", 0.24), ("South", 0.28), ("East", 0.18), ("West", 0.20), ("Central", 0.10)]

# department: weight, (age lo, age hi), median stay days, median cost, median wait
DEPARTMENTS = {
    "Emergency":        (0.30, (0, 99), 0.3, 1400.0, 95.0),
    "General Medicine": (0.22, (18, 99), 2.5, 2300.0, 40.0),
    "Orthopedics":      (0.12, (8, 95), 3.0, 9800.0, 35.0),
    "Cardiology":       (0.11, (30, 99), 4.0, 14500.0, 30.0),
    "Pediatrics":       (0.10, (0, 17), 1.5, 3100.0, 45.0),
    "Maternity":        (0.08, (18, 45), 2.2, 6200.0, 20.0),
    "Oncology":         (0.07, (25, 95), 5.5, 21000.0, 25.0),
}


def lognormal(rng, median, sigma):
    return median * math.exp(rng.gauss(0.0, sigma))


def generate(rows=ROWS, seed=SEED):
    rng = random.Random(seed)
    region_names = [r for r, _ in REGIONS]
    region_weights = [w for _, w in REGIONS]
    dept_names = list(DEPARTMENTS)
    dept_weights = [DEPARTMENTS[d][0] for d in dept_names]
    start = datetime.date(2024, 1, 1)
    patients = []          # (patient_id, region, age) of earlier patients, for repeat visits
    out = []
    for visit_id in range(1, rows + 1):
        dept = rng.choices(dept_names, dept_weights)[0]
        _, (age_lo, age_hi), stay_med, cost_med, wait_med = DEPARTMENTS[dept]
        if patients and rng.random() < 0.15:
            patient_id, region, age = rng.choice(patients)
            age = min(max(age, age_lo), age_hi)
        else:
            patient_id = 100000 + rng.randrange(900000)
            region = rng.choices(region_names, region_weights)[0]
            # older patients are more common, except where the department decides
            age = int(age_lo + (age_hi - age_lo + 1) * rng.random() ** 0.8)
            age = min(age, age_hi)
            patients.append((patient_id, region, age))
        visit_date = start + datetime.timedelta(days=rng.randrange(366))

        # length of stay grows with age; emergency visits are mostly same-day
        stay = lognormal(rng, stay_med * (1.0 + age / 150.0), 0.7)
        if dept == "Emergency" and rng.random() < 0.7:
            stay = 0.0
        stay = round(min(stay, 60.0), 1)
        still_admitted = rng.random() < 0.03
        stay_s = "" if still_admitted else f"{stay:.1f}"

        wait = lognormal(rng, wait_med, 0.6)
        if region == "Central":
            wait *= 1.3        # the busy downtown hospital
        wait_s = "" if rng.random() < 0.02 else f"{min(wait, 720.0):.1f}"

        cost = lognormal(rng, cost_med, 0.5) + 850.0 * stay
        pending = still_admitted or rng.random() < 0.03
        cost_s = "" if pending else f"{cost:.2f}"

        out.append([visit_id, patient_id, visit_date.isoformat(), region, dept,
                    age, stay_s, wait_s, cost_s])
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=os.path.join(here, "visits.csv"))
    ap.add_argument("--rows", type=int, default=ROWS)
    args = ap.parse_args()
    rows = generate(args.rows)
    with open(args.output, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["visit_id", "patient_id", "visit_date", "region", "department",
                    "age", "stay_days", "wait_minutes", "cost"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
