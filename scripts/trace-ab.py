#!/usr/bin/env python3
"""The A/B/A/B overhead runs of the scheduler trace (#23, docs/PERFORMANCE.md).

Build the two sides first, e.g. in DIR:
  (main)   go test -c -o DIR/bench-base.test ./bench && go build -o DIR/jade-base ./cmd/jade
  (branch) go test -c -o DIR/bench-br.test ./bench && go build -o DIR/jade-br ./cmd/jade
then: scripts/trace-ab.py DIR ROUNDS. Each round runs chained_spawn
(BenchmarkChainedSpawn/jade, 300 x 10k links) for main, the branch with
tracing off, with the flight recorder (JADE_FLIGHT=1) and with a full trace
(BenchmarkChainedSpawnTraced), then resp_ping (jade perf --quick: server CPU
per request) for main, off and flight; it writes DIR/ab-HHMM.tsv with the
1-minute load beside each figure and prints medians, quartiles and the
ratios paired by round to main, and of the flight recorder and the full
trace to the branch with tracing off."""
import collections, json, os, re, resource, statistics as st, subprocess, sys, time

def main():
    d, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10
    bench_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench')
    out = os.path.join(d, 'ab-%s.tsv' % time.strftime('%H%M'))
    rows = []
    def load(): return float(open('/proc/loadavg').read().split()[0])
    def run(cmd, env):
        e = dict(os.environ); e.update(env)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, cwd=bench_dir)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return p.stdout + p.stderr, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    n = 300
    chained = [('base', 'bench-base.test', 'ChainedSpawn$/jade', {}), ('off', 'bench-br.test', 'ChainedSpawn$/jade', {}),
               ('flight', 'bench-br.test', 'ChainedSpawn$/jade', {'JADE_FLIGHT': '1'}), ('full', 'bench-br.test', 'ChainedSpawnTraced$', {})]
    for r in range(1, rounds + 1):
        for cfg, b, pat, env in chained:
            txt, _ = run([os.path.join(d, b), '-test.run', '^$', '-test.bench', pat, '-test.benchtime', '%dx' % n], env)
            m = re.search(r'([\d.]+) ns/task', txt)
            rows.append((r, 'chained_spawn ns/link', cfg, float(m.group(1)) if m else None, load()))
        for cfg in ['base', 'off', 'flight']:
            b = 'jade-base' if cfg == 'base' else 'jade-br'
            js = os.path.join(d, 'rp.json')
            run([os.path.join(d, b), 'perf', '--scenarios', 'resp_ping', '--reps', '1', '--quick', '--json', js],
                {'JADE_FLIGHT': '1'} if cfg == 'flight' else {})
            try:
                v = [s for s in json.load(open(js))['scenarios'] if s['metric'].startswith('server CPU')][0]['jade']
            except (OSError, ValueError, IndexError, KeyError):
                v = None
            rows.append((r, 'resp_ping server CPU ns/req', cfg, v, load()))
    with open(out, 'w') as f:
        f.write('round\tbench\tcfg\tvalue\tload1\n')
        for row in rows:
            f.write('\t'.join(str(x) for x in row) + '\n')
    print(out)
    by = collections.defaultdict(dict)
    for r, b, c, v, _ in rows:
        if v is not None:
            by[(b, c)][r] = v
    loads = [x[4] for x in rows]
    print('load1: min %.2f median %.2f max %.2f' % (min(loads), st.median(loads), max(loads)))
    for (b, c), vals in by.items():
        v = list(vals.values())
        q = st.quantiles(v, n=4) if len(v) >= 4 else [min(v), max(v)]
        line = '%-28s %-7s n=%2d median %7.1f IQR %7.1f..%7.1f min %7.1f' % (b, c, len(v), st.median(v), q[0], q[-1], min(v))
        base = by.get((b, 'base'), {})
        pr = [vals[k] / base[k] for k in vals if k in base]
        if c != 'base' and pr:
            qq = st.quantiles(pr, n=4) if len(pr) >= 4 else [min(pr), max(pr)]
            line += '  /main paired: median %.3f IQR %.3f..%.3f' % (st.median(pr), qq[0], qq[-1])
        off = by.get((b, 'off'), {})
        po = [vals[k] / off[k] for k in vals if k in off]
        if c in ('flight', 'full') and po:
            qq = st.quantiles(po, n=4) if len(po) >= 4 else [min(po), max(po)]
            line += '  /off paired: median %.3f IQR %.3f..%.3f' % (st.median(po), qq[0], qq[-1])
        print(line)

if __name__ == '__main__':
    main()
