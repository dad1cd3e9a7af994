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
	"slices"
	"strconv"
	"strings"
	"sync"
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

// Stopping the lab stops what its notebook kernels started. GoNB v0.11.5 panics when Jupyter shuts
// it down, before it stops its gopls (in a process group of its own) and removes its gonb_ folder,
// so lab.sh gives the kernels a TMPDIR of their own and clears it after Jupyter: once the lab has
// stopped, by Ctrl-C (SIGINT) or by docker stop (SIGTERM), no process of the kernel is left and
// TMPDIR is as it was.
func TestLabStopLeavesNoKernelBehind(t *testing.T) {
	needLab(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
		t.Run(name, func(t *testing.T) { labStopLeavesNoKernelBehind(t, sig, name) })
	}
}

func labStopLeavesNoKernelBehind(t *testing.T, sig syscall.Signal, name string) {
	// A TMPDIR of the test's own, short (gopls's unix socket goes in it, under 108 bytes).
	tmp, err := os.MkdirTemp("", "synclab-labtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	cmd := labCmd(t, "TMPDIR="+tmp)
	// The output goes through a pipe of the test's own, not a copying goroutine of exec's: a gopls
	// left running would hold it open and keep cmd.Wait from returning.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	var kept []proc // the kernel's processes, killed at the end whatever happens
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, p := range append(kept, procsMentioning(tmp+"/")...) {
			if p.alive() {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		<-exited
		r.Close()
	})
	output := &lockedBuffer{}
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`http://\S+`)
		s := bufio.NewScanner(r)
		for sent := false; s.Scan(); {
			output.add(s.Text() + "\n")
			if u := re.FindString(s.Text()); u != "" && !sent {
				urls <- u
				sent = true
			}
		}
		io.Copy(io.Discard, r) // past a line too long to scan
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(time.Minute):
		t.Fatalf("no URL printed in a minute; output:\n%s", output)
	}
	m := regexp.MustCompile(`^(http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{48})$`).FindStringSubmatch(url)
	if m == nil {
		t.Fatalf("printed URL %q: want http://127.0.0.1:PORT/?token= and 48 hex digits", url)
	}
	base, token := m[1], m[2]

	// The server, up.
	var code int
	var body string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if code, body, err = get(base + "/api/kernelspecs?token=" + token); err == nil {
			break
		}
	}
	if code != http.StatusOK {
		t.Fatalf("the server did not answer in a minute: HTTP %d (%v) %.200q; output:\n%s", code, err, body, output)
	}
	// Two notebooks' kernels, as opening two notebooks starts them. Whether GoNB panics is a race
	// (its stop on SIGTERM against its stop on Jupyter's shutdown_request); two kernels make the
	// leak, when there is one, likelier to show.
	const kernels = 2
	for range kernels {
		req, err := http.NewRequest(http.MethodPost, base+"/api/kernels", strings.NewReader(`{"name":"gonb"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "token "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("starting a gonb kernel: HTTP %d %.300q", resp.StatusCode, b)
		}
	}

	// The kernels' gopls, grandchildren of Jupyter, and the folders their sockets are in.
	var gopls []proc
	for deadline := time.Now().Add(time.Minute); len(gopls) < kernels; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d gopls started by the lab's %d kernels in a minute, want %d; output:\n%s", len(gopls), kernels, kernels, output)
		}
		gopls = gopls[:0]
		for _, p := range descendants(cmd.Process.Pid) {
			if strings.Contains(p.cmdline, "gopls") && strings.Contains(p.cmdline, "-listen") {
				gopls = append(gopls, p)
			}
		}
	}
	kept = descendants(cmd.Process.Pid)
	var dirs []string
	for _, p := range gopls {
		_, socket, ok := strings.Cut(p.cmdline, "unix;")
		socket, _, _ = strings.Cut(socket, " ")
		if !ok || !strings.HasPrefix(socket, tmp+"/") || !strings.HasPrefix(filepath.Base(filepath.Dir(socket)), "gonb_") {
			t.Fatalf("gopls %d (%s): want its socket in a gonb_ folder in TMPDIR %s", p.pid, p.cmdline, tmp)
		}
		dirs = append(dirs, filepath.Dir(socket))
		if d := filepath.Dir(filepath.Dir(socket)); d != tmp && !slices.Contains(dirs, d) {
			dirs = append(dirs, d) // the lab's session folder
		}
	}
	t.Logf("kernel processes: %v; folders: %v", kept, dirs)

	// Stopped as a terminal or docker stop does, the lab must exit and leave nothing behind.
	syscall.Kill(-cmd.Process.Pid, sig)
	select {
	case <-exited:
		exited <- nil // for the cleanup
	case <-time.After(time.Minute):
		t.Fatalf("the lab still runs a minute after %s; output:\n%s", name, output)
	}
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		left = left[:0]
		seen := map[proc]bool{}
		for _, p := range append(kept, procsMentioning(tmp+"/")...) {
			if !seen[p] && p.alive() {
				left = append(left, p.String())
			}
			seen[p] = true
		}
		entries, _ := os.ReadDir(tmp)
		for _, e := range entries {
			left = append(left, "folder "+filepath.Join(tmp, e.Name()))
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if strings.Contains(output.String(), "close of closed channel") {
		t.Logf("GoNB panicked on shutdown (the upstream bug the lab works around)")
	}
	if len(left) > 0 {
		t.Errorf("10 s after the lab stopped on %s, left behind:\n  %s\noutput:\n%s", name, strings.Join(left, "\n  "), output)
	}
}

// proc is a process seen in /proc: its PID and command line (arguments joined by spaces).
type proc struct {
	pid     int
	cmdline string
}

func (p proc) String() string { return fmt.Sprintf("pid %d (%s)", p.pid, p.cmdline) }

// alive reports whether p still runs: the PID is there, with the same command line, and is no zombie.
func (p proc) alive() bool {
	q, ok := readProc(p.pid)
	if !ok || q.cmdline != p.cmdline {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// readProc returns process pid with its command line, and whether it exists.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return proc{}, false
	}
	return proc{pid, strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))}, true
}

// allProcs returns the processes running now and each one's parent PID.
func allProcs() map[proc]int {
	procs := map[proc]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ok := readProc(pid)
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if !ok || err != nil {
			continue
		}
		_, rest, _ := strings.Cut(string(stat), ") ") // the command name may hold spaces
		if f := strings.Fields(rest); len(f) > 1 {
			procs[p], _ = strconv.Atoi(f[1])
		}
	}
	return procs
}

// descendants returns the processes that descend from pid (not pid itself).
func descendants(pid int) []proc {
	procs := allProcs()
	parent := map[int]int{}
	for p, pp := range procs {
		parent[p.pid] = pp
	}
	var out []proc
	for p := range procs {
		for q, n := parent[p.pid], 0; q > 1 && n < 100; q, n = parent[q], n+1 {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// procsMentioning returns the processes whose command line contains s (but this test's).
func procsMentioning(s string) []proc {
	var out []proc
	for p := range allProcs() {
		if strings.Contains(p.cmdline, s) && p.pid != os.Getpid() {
			out = append(out, p)
		}
	}
	return out
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
