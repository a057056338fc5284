package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// enableEnv turns the suite on: it needs a browser, which `make test` does
// not.
const enableEnv = "SLUICE_TEST_CONSOLE"

// width and height are the window the console is promised to work in.
const width, height = 1280, 800

// browser is the Chromium every test of the package opens its tabs in, each
// in a browser context of its own (its own cookies): started by the first
// test that needs it, stopped by TestMain.
var browser struct {
	once   sync.Once
	ctx    context.Context
	err    error
	cancel []context.CancelFunc
}

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(browser.cancel) - 1; i >= 0; i-- {
		browser.cancel[i]()
	}
	os.Exit(code)
}

// needBrowser skips the test unless the suite is on, and fails it when the
// suite is on and no Chromium can be started.
func needBrowser(t testing.TB) context.Context {
	t.Helper()
	if os.Getenv(enableEnv) == "" {
		t.Skipf("%s is not set: the browser tests run with make test-console", enableEnv)
	}
	browser.once.Do(startBrowser)
	if browser.err != nil {
		t.Fatalf("%v", browser.err)
	}
	return browser.ctx
}

// chromiumPath is the browser to drive: SLUICE_CHROMIUM, else Debian's
// /usr/bin/chromium, else chromium or chromium-browser on PATH.
func chromiumPath() (string, error) {
	if p := os.Getenv("SLUICE_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("SLUICE_CHROMIUM=%s: %w", p, err)
		}
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("the console's browser tests need Chromium, which is not installed: " +
		"apt-get install chromium (or point SLUICE_CHROMIUM at a Chromium or Chrome binary)")
}

func startBrowser() {
	path, err := chromiumPath()
	if err != nil {
		browser.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(width, height),
		// Chromium's first run would fetch components from the network.
		chromedp.Flag("disable-component-update", true),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root (CI's
		// containers run as root).
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	browser.cancel = append(browser.cancel, cancelAlloc, cancelCtx)
	if err := chromedp.Do(ctx); err != nil {
		browser.err = fmt.Errorf("starting %s: %w", path, err)
		return
	}
	browser.ctx = ctx
}

// artifactsDir is where failed steps leave their screenshots and DOMs.
func artifactsDir() string {
	if d := os.Getenv("SLUICE_CONSOLE_ARTIFACTS"); d != "" {
		return d
	}
	// go test runs in the package's directory, tests/console.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		root = "."
	}
	return filepath.Join(root, ".cache", "console-artifacts")
}

// safeName makes a test's name a directory name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
