// Command reportcheck checks the HTML report of `jade perf --html` in a
// real browser (make report-check): it renders the report of a fixture
// (perf/testdata/report_fixture.json), loads it in headless Chromium
// (installed with apt-get when missing and possible), fails when the DOM
// lacks one of the report's charts, holds NaN or Infinity, or has a text
// that overflows its chart or its column (measured by the browser), and
// writes screenshots of the page and of each chart type to look at.
// Without Chromium it says so and exits 0, having checked nothing.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jadevm/jade/perf"
)

// layoutCheck runs in the page: every text of every chart lies inside its
// svg and within the room its data-maxw gives it; the verdict goes to
// body's data-layout, the offenders to #layout-errors.
const layoutCheck = `<script>
(function () {
  var bad = [];
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var W = svg.width.baseVal.value, H = svg.height.baseVal.value;
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBBox(), s = t.textContent;
      if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > W + 0.5 || b.y + b.height > H + 0.5)
        bad.push('outside its chart (' + b.x.toFixed(0) + '..' + (b.x + b.width).toFixed(0) + ' of ' + W + '): ' + s);
      var m = t.getAttribute('data-maxw');
      if (m !== null && t.getComputedTextLength() > parseFloat(m) + 0.5)
        bad.push('wider than its room (' + t.getComputedTextLength().toFixed(0) + ' > ' + m + ' px): ' + s);
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'layout-errors';
  pre.textContent = bad.join('\n');
  document.body.appendChild(pre);
  document.body.setAttribute('data-layout', bad.length ? 'overflow' : 'ok');
  document.body.setAttribute('data-charts', document.querySelectorAll('svg.chart').length);
})();
</script>
`

func main() {
	fixture := flag.String("fixture", "perf/testdata/report_fixture.json", "the report to render (JSON of jade perf --json)")
	out := flag.String("out", "out/report-check", "where the pages and screenshots go")
	install := flag.Bool("install", true, "install chromium with apt-get when missing")
	flag.Parse()
	if err := run(*fixture, *out, *install); err != nil {
		fmt.Fprintf(os.Stderr, "report-check: FAIL: %v\n", err)
		os.Exit(1)
	}
}

func run(fixture, out string, install bool) error {
	b, err := os.ReadFile(fixture)
	if err != nil {
		return err
	}
	var rep perf.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", fixture, err)
	}
	var page bytes.Buffer
	if err := perf.WriteHTML(&page, &rep); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	html := page.String()
	want := map[string]int{}
	for _, m := range regexp.MustCompile(`<svg class="chart ([a-z]+)"`).FindAllStringSubmatch(html, -1) {
		want[m[1]]++
	}
	for _, kind := range []string{"ratios", "latency", "hist"} {
		if want[kind] == 0 {
			return fmt.Errorf("the fixture's report has no %s chart: the fixture no longer covers every chart type", kind)
		}
	}
	// The page as written, the page with the check, and one page per
	// chart type (the other sections hidden) for the screenshots.
	pages := map[string]string{
		"report.html": html,
		"check.html":  strings.Replace(html, "</body>", layoutCheck+"</body>", 1),
	}
	for _, s := range []string{"ratios", "latency"} {
		pages["only-"+s+".html"] = strings.Replace(html, "</head>", "<style>section:not(#s-"+s+"){display:none}</style></head>", 1)
	}
	for name, body := range pages {
		if err := os.WriteFile(filepath.Join(abs, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	chrome, err := findChromium(install)
	if err != nil {
		fmt.Printf("report-check: SKIPPED: no headless Chromium: %v (apt-get install chromium); %s/report.html was written but not checked in a browser\n", err, out)
		return nil
	}
	dom, err := browse(chrome, "--dump-dom", "file://"+filepath.Join(abs, "check.html"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(abs, "check.dom.html"), dom, 0o644); err != nil {
		return err
	}
	if err := checkDOM(string(dom), want); err != nil {
		return err
	}
	for _, shot := range []struct{ png, page string }{
		{"report.png", "report.html"}, {"ratios.png", "only-ratios.html"}, {"latency.png", "only-latency.html"},
	} {
		p := filepath.Join(abs, shot.png)
		if _, err := browse(chrome, "--screenshot="+p, "--window-size=1400,3000", "file://"+filepath.Join(abs, shot.page)); err != nil {
			return err
		}
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			return fmt.Errorf("no screenshot %s: %v", p, err)
		}
	}
	fmt.Printf("report-check: ok: %d charts (%v) drawn in %s with no overflow, NaN or Infinity; screenshots: %s/{report,ratios,latency}.png\n",
		want["ratios"]+want["latency"]+want["hist"], want, chrome, out)
	return nil
}

// checkDOM fails on a chart missing from the browser's DOM, NaN or
// Infinity anywhere, or the layout check's offenders.
func checkDOM(dom string, want map[string]int) error {
	if !strings.Contains(dom, `data-layout=`) {
		return errors.New("the layout check did not run (no data-layout on body)")
	}
	for kind, n := range want {
		if got := strings.Count(dom, `<svg class="chart `+kind+`"`); got != n {
			return fmt.Errorf("%d %s charts in the DOM, want %d", got, kind, n)
		}
	}
	for _, bad := range []string{"NaN", "Infinity"} {
		if i := strings.Index(dom, bad); i >= 0 {
			return fmt.Errorf("%s in the page near %q", bad, dom[max(0, i-80):min(len(dom), i+40)])
		}
	}
	if !strings.Contains(dom, `data-layout="ok"`) {
		m := regexp.MustCompile(`(?s)<pre id="layout-errors">(.*?)</pre>`).FindStringSubmatch(dom)
		if m == nil {
			return errors.New("layout check: overflow")
		}
		return fmt.Errorf("texts overflow:\n%s", m[1])
	}
	return nil
}

// findChromium returns the headless browser's path, installing the
// Debian package chromium when allowed and possible.
func findChromium(install bool) (string, error) {
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	if !install {
		return "", errors.New("chromium is not installed")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", errors.New("chromium is not installed and there is no apt-get")
	}
	cmd := []string{"apt-get", "install", "-y", "chromium"}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("sudo"); err != nil {
			return "", errors.New("chromium is not installed and apt-get needs root")
		}
		cmd = append([]string{"sudo", "-n"}, cmd...)
	}
	fmt.Printf("report-check: %s\n", strings.Join(cmd, " "))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if o, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get install chromium: %w: %s", err, lastLine(o))
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		return "", errors.New("chromium is still not on PATH after apt-get")
	}
	return p, nil
}

// browse runs headless Chromium once with args and returns its stdout.
func browse(chrome string, args ...string) ([]byte, error) {
	prof, err := os.MkdirTemp("", "report-check-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(prof)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + prof}
	c := exec.CommandContext(ctx, chrome, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", filepath.Base(chrome), args[0], err, lastLine(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
