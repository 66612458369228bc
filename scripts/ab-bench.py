#!/usr/bin/env python3
"""A/B/A/B of one Go benchmark over several prebuilt bench.test binaries
(docs/PERFORMANCE.md, "Session 12").

  scripts/ab-bench.py DIR ROUNDS BENCH BENCHTIME UNIT VARIANT...

Each VARIANT names DIR/VARIANT.bench.test, optionally with environment
settings after an @: base, base@JADE_FLIGHT=1,
flight@JADE_BENCH_WORKERS=1,JADE_FLIGHT=1. Every round runs each variant
once (the order reversed every other round) and reads the figure before
UNIT (ns/op, ns/task, ns/yield); the summary gives each variant's median
and minimum and its ratio to the first variant, paired by round (median
and quartiles) and of the minima. Copy one binary under two names for an
A/A control: its ratio is the loop's noise floor."""
import collections, os, re, statistics as st, subprocess, sys, time


def main():
    d, rounds, bench, benchtime, unit = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    variants = sys.argv[6:]
    bench_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench')
    by = collections.defaultdict(dict)
    for r in range(rounds):
        for v in (variants if r % 2 == 0 else variants[::-1]):
            name, _, envs = v.partition('@')
            env = dict(os.environ)
            for kv in filter(None, envs.split(',')):
                k, _, x = kv.partition('=')
                env[k] = x
            p = subprocess.run([os.path.join(d, name + '.bench.test'), '-test.run', '^$', '-test.bench', bench,
                                '-test.benchtime', benchtime], capture_output=True, text=True, cwd=bench_dir, env=env)
            m = re.search(r'([\d.]+) ' + re.escape(unit), p.stdout)
            if m:
                by[v][r] = float(m.group(1))
            else:
                print(v, 'gave no', unit, p.stdout[-300:], p.stderr[-300:], file=sys.stderr)
        load = open('/proc/loadavg').read().split()[0]
        print('round', r, time.strftime('%H:%M:%S'), 'load', load, {v: by[v].get(r) for v in variants}, flush=True)
    base = variants[0]
    for v in variants:
        xs = list(by[v].values())
        rs = [by[v][r] / by[base][r] for r in by[v] if r in by[base]]
        q = st.quantiles(rs, n=4) if len(rs) >= 4 else [min(rs), max(rs)]
        print(f'{v:28} n={len(xs):3} median {st.median(xs):9.1f} min {min(xs):9.1f}  /{base}: paired median '
              f'{st.median(rs):.3f} IQR {q[0]:.3f}..{q[-1]:.3f}, minima {min(xs) / min(by[base].values()):.3f}')


if __name__ == '__main__':
    main()
