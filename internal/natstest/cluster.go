package natstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var (
	natsBuildOnce sync.Once
	natsBinary    string
	natsBuildErr  error
)

// ServerBinary returns the path of a nats-server of the version go.mod
// requires, built from the module once per test binary at most. The build is
// kept in the user's cache folder under a name of that version and of the Go
// toolchain, so that the test binaries that follow run it rather than link it
// again, which takes seconds on a busy machine. A nats-server that go.mod
// replaces has no version to name it by: it is built anew, into a temporary
// folder, by each test binary.
func ServerBinary(t testing.TB) string {
	t.Helper()
	natsBuildOnce.Do(func() {
		began := time.Now()
		var built bool
		natsBinary, built, natsBuildErr = natsServer()
		if built {
			t.Logf("built nats-server in %v", time.Since(began).Round(time.Millisecond))
		}
	})
	if natsBuildErr != nil {
		t.Fatal(natsBuildErr)
	}
	return natsBinary
}

const natsServerModule = "github.com/nats-io/nats-server/v2"

// natsServer returns the path of the cached build of nats-server, building it
// first unless the cache holds it; built says whether it did.
func natsServer() (path string, built bool, err error) {
	version, err := natsServerVersion()
	if err != nil {
		return "", false, err
	}
	cache, err := os.UserCacheDir()
	if version == "" || err != nil {
		dir, err := os.MkdirTemp("", "herald-test-nats-")
		if err != nil {
			return "", false, err
		}
		path = filepath.Join(dir, "nats-server")
		return path, true, goBuild(path, natsServerModule)
	}
	dir := filepath.Join(cache, "herald-test")
	path = filepath.Join(dir, fmt.Sprintf("nats-server-%s-%s-%s-%s", version, runtime.Version(), runtime.GOOS, runtime.GOARCH))
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(tmp)
	if err := goBuild(filepath.Join(tmp, "nats-server"), natsServerModule); err != nil {
		return "", false, err
	}
	// Whole or not at all: a test binary that builds it at the same time
	// renames a build as good as this one into its place.
	return path, true, os.Rename(filepath.Join(tmp, "nats-server"), path)
}

// natsServerVersion is the version of nats-server that go.mod requires, or ""
// when go.mod replaces it.
func natsServerVersion() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{if not .Replace}}{{.Version}}{{end}}", natsServerModule).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", natsServerModule, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// natsReadyWithin bounds how long a node may take to accept clients, and the
// cluster to elect a JetStream meta leader.
const natsReadyWithin = 30 * time.Second

// Cluster is nats-server processes clustered with JetStream on loopback ports.
type Cluster struct {
	Nodes []*Node
	t     testing.TB
}

// Node is one nats-server of a Cluster. It keeps its name, ports and
// store folder across Stop, Kill and Start.
type Node struct {
	Name      string
	ClientURL string
	// StoreDir is the node's JetStream store.
	StoreDir string
	// out holds what every run of the process printed.
	out *syncBuffer

	t      testing.TB
	config string // the configuration file

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited; nil before the first Start
	err  error
}

// Start starts n nodes (n >= 1; n == 1 is a plain JetStream server) and
// returns once every node accepts clients, the JetStream meta group has a leader and
// the cluster can place a stream with a replica on every node.
// It skips the test with a message naming the reason when it cannot bind loopback
// ports. Every node is killed when the test ends, and what the nodes printed is
// logged if the test failed.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("a NATS cluster of %d nodes", n)
	}
	bin := ServerBinary(t)
	ports := freeLoopbackPorts(t, 2*n) // in one go: a port freed by the first pick is not picked again
	clientPorts, clusterPorts := ports[:n], ports[n:]
	c := &Cluster{t: t}
	dir := t.TempDir()
	for i := range n {
		node := &Node{
			Name:      fmt.Sprintf("nats-%d", i+1),
			ClientURL: fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[i]),
			out:       &syncBuffer{},
			t:         t,
		}
		node.StoreDir = filepath.Join(dir, node.Name, "store")
		node.config = filepath.Join(dir, node.Name, "nats-server.conf")
		var routes []string
		for j, port := range clusterPorts {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", port))
			}
		}
		conf := natsConfig(node.Name, clientPorts[i], node.StoreDir, clusterPorts[i], routes)
		if err := os.MkdirAll(node.StoreDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(node.config, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, node)
	}
	t.Cleanup(func() {
		for _, node := range c.Nodes {
			node.kill()
		}
		if t.Failed() {
			for _, node := range c.Nodes {
				t.Logf("%s printed:\n%s", node.Name, node.out.String())
			}
		}
	})
	// Start every process before waiting for any: a clustered node does not
	// need its peers to accept clients, but the meta group needs a quorum.
	for _, node := range c.Nodes {
		node.launch(bin)
	}
	for _, node := range c.Nodes {
		node.waitAcceptsClients()
	}
	c.WaitJetStream()
	c.waitPlacement(n)
	return c
}

// waitPlacement returns once a stream of n replicas can be created: a meta leader
// answers requests before it counts its peers as current, and until it does it
// refuses to place a stream on all of them ("no suitable peers for placement").
func (c *Cluster) waitPlacement(n int) {
	c.t.Helper()
	if n < 2 {
		return
	}
	js := c.JetStream()
	defer js.Conn().Close()
	cfg := jetstream.StreamConfig{Name: "HERALD_TEST_PLACEMENT", Subjects: []string{"herald.test.placement"},
		Replicas: n, Storage: jetstream.MemoryStorage}
	err := untilReady(5*time.Second, func(ctx context.Context) error {
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			return err
		}
		return js.DeleteStream(ctx, cfg.Name)
	})
	if err != nil {
		c.t.Fatalf("the cluster could not place a stream on its %d nodes within %v: %v", n, natsReadyWithin, err)
	}
}

// untilReady calls try, each call bounded by perTry, until it succeeds or
// natsReadyWithin has passed, and then returns its last error. The cluster is
// real processes on the real clock: it is polled.
func untilReady(perTry time.Duration, try func(context.Context) error) error {
	deadline := time.Now().Add(natsReadyWithin)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), perTry)
		err := try(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// natsConfig is the configuration file of one node; routes empty is a
// server of its own, with no cluster block.
func natsConfig(name string, clientPort int, storeDir string, clusterPort int, routes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %q\n", name)
	fmt.Fprintf(&b, "listen: \"127.0.0.1:%d\"\n", clientPort)
	fmt.Fprintf(&b, "jetstream {\n  store_dir: %q\n}\n", storeDir)
	if len(routes) > 0 {
		fmt.Fprintf(&b, "cluster {\n  name: \"herald\"\n  listen: \"127.0.0.1:%d\"\n  routes: [\n", clusterPort)
		for _, r := range routes {
			fmt.Fprintf(&b, "    %q\n", r)
		}
		b.WriteString("  ]\n}\n")
	}
	return b.String()
}

// freeLoopbackPorts picks n distinct ports that are free on 127.0.0.1 now.
// Something else may take one before the node binds it; that node then fails
// to start and says so.
func freeLoopbackPorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("cannot bind a loopback port for nats-server: %v", err)
		}
		// Held open until all are picked, so that no port is picked twice.
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// URL is every node's client URL, comma-separated, as a client's server list.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.Nodes))
	for i, node := range c.Nodes {
		urls[i] = node.ClientURL
	}
	return strings.Join(urls, ",")
}

// JetStream connects a client to every node of the cluster, reconnecting
// without limit while nodes come and go. The caller closes js.Conn().
func (c *Cluster) JetStream() jetstream.JetStream {
	c.t.Helper()
	nc, err := nats.Connect(c.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.RetryOnFailedConnect(true))
	if err != nil {
		c.t.Fatalf("connect to %s: %v", c.URL(), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		c.t.Fatal(err)
	}
	return js
}

// WaitJetStream returns once JetStream answers an account-info request
// through the cluster, which takes a meta leader: after nodes restarted, for
// instance. It fails the test after 30 seconds.
func (c *Cluster) WaitJetStream() {
	c.t.Helper()
	js := c.JetStream()
	defer js.Conn().Close()
	err := untilReady(2*time.Second, func(ctx context.Context) error {
		_, err := js.AccountInfo(ctx)
		return err
	})
	if err != nil {
		c.t.Fatalf("JetStream did not answer within %v (no meta leader?): %v", natsReadyWithin, err)
	}
}

// Start runs the node again, with the same name, ports and store folder, and
// returns once it accepts clients. It does not wait for the node to catch up
// with the cluster, nor for a meta leader (Cluster.WaitJetStream does).
func (n *Node) Start() {
	n.t.Helper()
	if n.running() {
		n.t.Fatalf("%s is running already", n.Name)
	}
	fmt.Fprintf(n.out, "--- %s starts again ---\n", n.Name)
	n.launch(ServerBinary(n.t))
	n.waitAcceptsClients()
}

// Stop ends the node with SIGTERM, which nats-server answers with a clean
// shutdown, and waits for it to exit; after 10 seconds it is killed.
func (n *Node) Stop() {
	n.t.Helper()
	cmd, done := n.current()
	if done == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		n.t.Logf("%s did not exit within 10s of SIGTERM; killing it", n.Name)
		n.kill()
	}
}

// Kill ends the node with SIGKILL and waits for it to exit.
func (n *Node) Kill() {
	n.t.Helper()
	n.kill()
}

func (n *Node) kill() {
	cmd, done := n.current()
	if done == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

func (n *Node) current() (*exec.Cmd, chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd, n.done
}

func (n *Node) running() bool {
	_, done := n.current()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// launch starts the process without waiting for it to be ready.
func (n *Node) launch(bin string) {
	n.t.Helper()
	cmd := exec.Command(bin, "--config", n.config)
	cmd.Stdout, cmd.Stderr = n.out, n.out
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start %s: %v", n.Name, err)
	}
	done := make(chan struct{})
	n.mu.Lock()
	n.cmd, n.done, n.err = cmd, done, nil
	n.mu.Unlock()
	go func() {
		err := cmd.Wait()
		n.mu.Lock()
		n.err = err
		n.mu.Unlock()
		close(done)
	}()
}

// waitAcceptsClients polls the client port until a client connects.
func (n *Node) waitAcceptsClients() {
	n.t.Helper()
	_, done := n.current()
	deadline := time.Now().Add(natsReadyWithin)
	for {
		nc, err := nats.Connect(n.ClientURL, nats.Timeout(time.Second), nats.NoReconnect())
		if err == nil {
			nc.Close()
			return
		}
		select {
		case <-done:
			n.mu.Lock()
			exit := n.err
			n.mu.Unlock()
			n.t.Fatalf("%s exited before it accepted clients: %v\n%s", n.Name, exit, n.out.String())
		default:
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("%s did not accept clients on %s within %v: %v\n%s", n.Name, n.ClientURL, natsReadyWithin, err, n.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
