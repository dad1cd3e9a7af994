package deploy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// labScript is what make lab runs: the Jupyter server on the notebooks.
var labScript = filepath.Join("..", "scripts", "lab.sh")

// needLab skips the test without the setup that make lab installs (the GoNB kernel in .tools), or
// fails it under SYNCLAB_E2E=1 (make test), where a missing setup is a failure.
func needLab(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("..", ".tools", "jupyter", "kernels", "gonb", "kernel.json")); err == nil {
		return
	}
	if os.Getenv("SYNCLAB_E2E") == "1" {
		t.Fatal("SYNCLAB_E2E=1 but the GoNB kernel is not installed in .tools (scripts/setup.sh --test installs it)")
	}
	t.Skip("the GoNB kernel is not installed in .tools: run make lab or scripts/setup.sh --test")
}

// labCmd returns the command make lab runs, with env added, in a process group of its own (so
// that stopping it stops Jupyter too) and Jupyter's runtime files in a temporary folder.
func labCmd(t *testing.T, env ...string) *exec.Cmd {
	cmd := exec.Command("bash", labScript)
	cmd.Env = append(os.Environ(), append([]string{"LAB_HOST=", "LAB_PORT=", "LAB_TOKEN=", "JUPYTER_RUNTIME_DIR=" + t.TempDir()}, env...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// A port that is taken is refused before any URL is printed: the URL would lead to whatever
// listens there.
func TestLabRefusesABusyPort(t *testing.T) {
	needLab(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	var stdout, stderr strings.Builder
	cmd := labCmd(t, fmt.Sprintf("LAB_PORT=%d", port))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("lab.sh still runs a minute after starting on a busy port; stdout %q", stdout.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("lab.sh on a busy port: %v, want a failure; stdout %q", err, stdout.String())
	}
	want := fmt.Sprintf("port %d on 127.0.0.1 is in use (LAB_PORT=%d)", port, port)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not say %q", stderr.String(), want)
	}
	if strings.Contains(stdout.String(), "http://") {
		t.Errorf("a URL was printed for a busy port: %q", stdout.String())
	}
}

// make lab, as a user starts it: on loopback only, with a generated token that the server
// requires, on the first free port from 8888 (here 8888 is kept busy, so that is another one).
func TestLabServesWithItsToken(t *testing.T) {
	needLab(t)
	if l, err := net.Listen("tcp", "127.0.0.1:8888"); err == nil {
		defer l.Close()
	} // else 8888 is busy already, which is what the test wants

	cmd := labCmd(t)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`http://\S+`)
		s := bufio.NewScanner(out)
		for s.Scan() {
			if u := re.FindString(s.Text()); u != "" {
				urls <- u
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(time.Minute):
		t.Fatalf("no URL printed in a minute; stderr: %s", stderr.String())
	}
	m := regexp.MustCompile(`^http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{48})$`).FindStringSubmatch(url)
	if m == nil {
		t.Fatalf("printed URL %q: want http://127.0.0.1:PORT/?token= and 48 hex digits", url)
	}
	port, token := m[1], m[2]
	if port == "8888" {
		t.Fatalf("printed URL %q: port 8888 is busy", url)
	}
	base := "http://127.0.0.1:" + port + "/api/kernelspecs"
	var body string
	code := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if code, body, err = get(base + "?token=" + token); err == nil {
			break
		}
	}
	if code != http.StatusOK || !strings.Contains(body, `"gonb"`) {
		t.Fatalf("with the token: HTTP %d (%v), body %.200q; stderr: %s", code, err, body, stderr.String())
	}
	for _, u := range []string{base, base + "?token=not-" + token} {
		if code, _, err := get(u); err != nil || code != http.StatusForbidden {
			t.Errorf("%s: HTTP %d (%v), want 403", strings.Replace(u, token, "TOKEN", 1), code, err)
		}
	}
	n, _ := strconv.Atoi(port)
	addrs := listening(t, n)
	if len(addrs) == 0 {
		t.Errorf("nothing listens on port %d", n)
	}
	for _, a := range addrs {
		if a != "127.0.0.1" {
			t.Errorf("port %d listens on %v, want 127.0.0.1 only", n, addrs)
		}
	}
}

// get returns the status and body of a GET of url.
func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// listening returns the local addresses of the sockets listening on port, from /proc/net/tcp and
// tcp6 (IPv4 addresses as dotted quads, IPv6 ones in hex).
func listening(t *testing.T, port int) []string {
	t.Helper()
	var addrs []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			host, p, _ := strings.Cut(fields[1], ":")
			if v, err := strconv.ParseUint(p, 16, 16); err != nil || int(v) != port {
				continue
			}
			if len(host) == 8 { // IPv4, little-endian hex
				v, _ := strconv.ParseUint(host, 16, 32)
				host = fmt.Sprintf("%d.%d.%d.%d", v&0xff, v>>8&0xff, v>>16&0xff, v>>24)
			}
			addrs = append(addrs, host)
		}
	}
	return addrs
}
