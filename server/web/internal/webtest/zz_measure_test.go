package webtest

// Not committed: the CPU of one page load (s.open: the link, then proxy mode), all of Chromium's
// processes, from opening the link until 8 s after the ledger is shown. One tab at a time.
import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

func treeCPUWeb(pid int) time.Duration {
	parent := map[int]int{}
	ticks := map[int]int64{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		end := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 13 {
			continue
		}
		var p, pp int
		var ut, st int64
		fmt.Sscan(strings.Fields(string(b))[0], &p)
		fmt.Sscan(f[1], &pp)
		fmt.Sscan(f[11], &ut)
		fmt.Sscan(f[12], &st)
		parent[p], ticks[p] = pp, ut+st
	}
	var total int64
	for p, tk := range ticks {
		for q := p; q > 1; q = parent[q] {
			if q == pid {
				total += tk
				break
			}
		}
	}
	return time.Duration(total) * 10 * time.Millisecond
}

func TestMeasureLoad(t *testing.T) {
	for i := 0; i < 4; i++ {
		svc := newService(t)
		s := newSession(t, svc)
		pid := chromedp.FromContext(shared.ctx).Browser.Process().Pid
		time.Sleep(time.Second)
		if b := os.Getenv("BLOCK"); b != "" {
			var ps []*network.BlockPattern
			for _, x := range strings.Split(b, ",") {
				ps = append(ps, &network.BlockPattern{URLPattern: x, Block: true})
			}
			ctx, cancel := s.stepContext()
			if _, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: ps}); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
		before := treeCPUWeb(pid)
		if os.Getenv("BLANK") != "" {
			s.do(chromedp.Navigate(svc.ts.URL + "/static/app.css"))
		} else {
			s.open(testPerson, svc.token)
			s.waitFor("the ledger", `document.getElementById("budget-text").textContent.includes("left")`)
		}
		time.Sleep(8 * time.Second)
		t.Logf("load %d: %.2f CPU-s of Chromium", i, (treeCPUWeb(pid) - before).Seconds())
	}
}
