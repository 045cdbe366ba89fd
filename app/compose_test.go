package app

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestComposeDescribesTheScaleOutTopology reads compose.yaml, which no test
// here can run (there is no container engine), and checks that it describes
// what a scaled-out Herald needs: three NATS nodes clustered with JetStream,
// one control process, workers, and every Herald process on the same NATS
// servers, replicas, ledger and delivery key.
func TestComposeDescribesTheScaleOutTopology(t *testing.T) {
	t.Parallel()
	f := loadCompose(t, filepath.Join("..", "compose.yaml"))

	nodes := map[string]natsNode{} // by service name
	for name, s := range f.Services {
		if strings.HasPrefix(s.Image, "nats:") {
			nodes[name] = checkNATSNode(t, f, name, s)
		}
	}
	if len(nodes) != 3 {
		t.Fatalf("%d NATS services (%v), want 3", len(nodes), slices.Sorted(maps.Keys(nodes)))
	}
	serverNames := map[string]string{}
	for name, n := range nodes {
		if other, ok := serverNames[n.serverName]; ok {
			t.Errorf("%s and %s are both named %q", name, other, n.serverName)
		}
		serverNames[n.serverName] = name
		var want []string
		for other, o := range nodes {
			if other != name {
				want = append(want, net.JoinHostPort(other, o.clusterPort))
			}
		}
		if slices.Sort(want); !slices.Equal(n.routes, want) {
			t.Errorf("%s routes to %v, want the other two nodes %v", name, n.routes, want)
		}
	}
	var clientAddrs []string
	for name, n := range nodes {
		clientAddrs = append(clientAddrs, net.JoinHostPort(name, n.clientPort))
	}
	slices.Sort(clientAddrs)

	var control, workers []string
	keyFiles := map[string]string{}    // key file path and volume, by service
	dataVolumes := map[string]string{} // service by volume of its data folder
	for name, s := range f.Services {
		if s.Build == nil {
			continue
		}
		env := heraldEnv(s)
		cfg := DefaultConfig()
		if err := ApplyEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if err := cfg.Validate(); err != nil {
			t.Errorf("%s: Herald would not start with this environment:\n%v", name, err)
		}
		switch roles := env["HERALD_ROLES"]; roleSet(roles) {
		case "api,engine":
			control = append(control, name)
			if !publishes(t, s, env["HERALD_LISTEN"]) {
				t.Errorf("control service %s does not publish the port of HERALD_LISTEN %q (ports %v)", name, env["HERALD_LISTEN"], s.Ports)
			}
		case "worker":
			workers = append(workers, name)
			if len(s.Ports) > 0 {
				t.Errorf("worker %s publishes ports %v", name, s.Ports)
			}
		default:
			t.Errorf("Herald service %s has roles %q, neither api,engine nor worker", name, roles)
		}

		if got := natsAddrs(t, env["HERALD_NATS_URL"]); !slices.Equal(got, clientAddrs) {
			t.Errorf("%s: HERALD_NATS_URL %q names %v, want the three nodes %v", name, env["HERALD_NATS_URL"], got, clientAddrs)
		}
		if got := env["HERALD_NATS_REPLICAS"]; got != "3" {
			t.Errorf("%s: HERALD_NATS_REPLICAS %q, want 3", name, got)
		}
		if got := env["HERALD_DELIVERY_LEDGER"]; got != "jetstream" {
			t.Errorf("%s: HERALD_DELIVERY_LEDGER %q, want jetstream", name, got)
		}
		if host := env["HERALD_SMTP_HOST"]; host != "" && f.Services[host] == nil {
			t.Errorf("%s: HERALD_SMTP_HOST %q is no service of the file", name, host)
		}

		keyFile := env["HERALD_DELIVERY_KEYFILE"]
		if keyFile == "" {
			t.Errorf("%s has no HERALD_DELIVERY_KEYFILE", name)
		} else if m, ok := mountOf(t, s, keyFile); !ok || !m.named() {
			t.Errorf("%s: the key file %s is on no named volume", name, keyFile)
		} else {
			if !m.readOnly {
				t.Errorf("%s mounts the key volume %s writable", name, m.source)
			}
			keyFiles[name] = keyFile + " on volume " + m.source
			writer, written := keyWriter(t, f, m.source)
			if cond, ok := dependsOn(t, s)[writer]; !ok || cond != "service_completed_successfully" {
				t.Errorf("%s does not wait for %s, which writes volume %s, to complete (depends_on %v)", name, writer, m.source, s.DependsOn)
			}
			// The writer's path of the key, wherever it mounts the volume.
			if at := path.Join(written, strings.TrimPrefix(path.Clean(keyFile), m.target)); !strings.Contains(strings.Join(f.Services[writer].args(), " "), at) {
				t.Errorf("%s's command does not name the key file %s (%s in %s)", writer, at, keyFile, name)
			}
		}

		if data := env["HERALD_DATA"]; data == "" {
			t.Errorf("%s has no HERALD_DATA", name)
		} else if m, ok := mountOf(t, s, data); !ok || !m.named() || m.target != path.Clean(data) {
			t.Errorf("%s: the data folder %s is not a named volume of its own", name, data)
		} else if other, ok := dataVolumes[m.source]; ok {
			t.Errorf("%s and %s share the data volume %s", name, other, m.source)
		} else {
			dataVolumes[m.source] = name
		}
	}
	if len(control) != 1 {
		t.Errorf("control services (roles api,engine) %v, want exactly one", control)
	}
	if len(workers) < 2 {
		t.Errorf("worker services (roles worker) %v, want at least two", workers)
	}
	var first string
	for name, k := range keyFiles {
		if first == "" {
			first = name
		} else if k != keyFiles[first] {
			t.Errorf("%s reads the delivery key from %s, %s from %s", name, k, first, keyFiles[first])
		}
	}
}

// composeFile is the part of a Compose file the tests read.
type composeFile struct {
	Services map[string]*composeService `yaml:"services"`
	Volumes  map[string]any             `yaml:"volumes"`
}

// composeService keeps the fields Compose accepts in several forms as they
// were decoded; the functions below read each form.
type composeService struct {
	Image       string `yaml:"image"`
	Build       any    `yaml:"build"`
	Command     any    `yaml:"command"`     // a list, or a string
	Environment any    `yaml:"environment"` // a map, or a list of KEY=value
	Volumes     []any  `yaml:"volumes"`     // short strings, or long maps
	Ports       []any  `yaml:"ports"`
	DependsOn   any    `yaml:"depends_on"` // a list, or a map of conditions
}

// loadCompose decodes a Compose file; YAML anchors and merge keys are
// resolved by the decoder.
func loadCompose(t *testing.T, file string) composeFile {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for name, s := range f.Services {
		for _, v := range s.Volumes {
			m := parseMount(t, v)
			if _, ok := f.Volumes[m.source]; m.named() && !ok {
				t.Errorf("%s mounts volume %s, which the file does not declare", name, m.source)
			}
		}
	}
	return f
}

// args is the service's command as a list of arguments.
func (s *composeService) args() []string {
	switch c := s.Command.(type) {
	case string:
		return strings.Fields(c)
	case []any:
		args := make([]string, len(c))
		for i, a := range c {
			args[i] = fmt.Sprint(a)
		}
		return args
	}
	return nil
}

// heraldEnv is the HERALD_* configuration a Herald service's file gives it:
// its environment, in map or list form, with the serve flags of its command
// on top (they override the environment, as in Herald). Variables without a
// value, which Compose takes from the operator's shell, are left out, as are
// the image's own defaults (the Dockerfile's ENV) and env_file.
func heraldEnv(s *composeService) map[string]string {
	env := map[string]string{}
	switch e := s.Environment.(type) {
	case map[string]any:
		for k, v := range e {
			if v != nil {
				env[k] = fmt.Sprint(v)
			}
		}
	case []any:
		for _, item := range e {
			if k, v, ok := strings.Cut(fmt.Sprint(item), "="); ok {
				env[k] = v
			}
		}
	}
	args := s.args()
	if len(args) == 0 || args[0] != "serve" {
		return env
	}
	flagEnv := map[string]string{"roles": "HERALD_ROLES", "data": "HERALD_DATA", "listen": "HERALD_LISTEN"}
	for i := 1; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		key, ok := flagEnv[name]
		if !ok || !strings.HasPrefix(args[i], "-") {
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		env[key] = value
	}
	return env
}

// roleSet is a comma-separated list of roles sorted and without blanks; no
// list at all is every role, Herald's default.
func roleSet(roles string) string {
	if strings.TrimSpace(roles) == "" {
		return "api,engine,worker"
	}
	var set []string
	for r := range strings.SplitSeq(roles, ",") {
		if r = strings.TrimSpace(r); r != "" && !slices.Contains(set, r) {
			set = append(set, r)
		}
	}
	slices.Sort(set)
	return strings.Join(set, ",")
}

// natsAddrs is the sorted host:port of each server of a NATS server list.
func natsAddrs(t *testing.T, list string) []string {
	t.Helper()
	var addrs []string
	for s := range strings.SplitSeq(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			t.Errorf("NATS server %q is not a URL", s)
			continue
		}
		port := u.Port()
		if port == "" {
			port = "4222"
		}
		addrs = append(addrs, net.JoinHostPort(u.Hostname(), port))
	}
	slices.Sort(addrs)
	return addrs
}

// natsNode is what a NATS service's command sets.
type natsNode struct {
	serverName, clientPort, clusterPort string
	routes                              []string // host:port, sorted
}

// natsBoolFlags are the nats-server flags that take no value.
var natsBoolFlags = map[string]bool{"js": true, "jetstream": true, "D": true, "V": true, "DV": true, "VV": true, "DVV": true}

// natsFlagNames maps nats-server's short flags to their long names.
var natsFlagNames = map[string]string{"js": "jetstream", "n": "server_name", "name": "server_name",
	"sd": "store_dir", "p": "port", "m": "http_port", "c": "config"}

// checkNATSNode reads the flags of a NATS service and checks it runs
// JetStream on a store of its own, in cluster herald.
func checkNATSNode(t *testing.T, f composeFile, name string, s *composeService) natsNode {
	t.Helper()
	args := s.args()
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = args[1:] // nats-server
	}
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			t.Errorf("%s: argument %q is no flag", name, args[i])
			continue
		}
		flag, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !hasValue && !natsBoolFlags[flag] && i+1 < len(args) {
			i++
			value = args[i]
		}
		if long, ok := natsFlagNames[flag]; ok {
			flag = long
		}
		flags[flag] = value
	}
	if _, ok := flags["config"]; ok {
		t.Errorf("%s: a configuration file is not read by this test; use flags", name)
	}
	if _, ok := flags["jetstream"]; !ok {
		t.Errorf("%s runs without JetStream (-js)", name)
	}
	n := natsNode{serverName: flags["server_name"], clientPort: cmp.Or(flags["port"], "4222")}
	if n.serverName == "" {
		t.Errorf("%s has no --server_name", name)
	}
	if flags["cluster_name"] != "herald" {
		t.Errorf("%s: --cluster_name %q, want herald", name, flags["cluster_name"])
	}
	if u, err := url.Parse(flags["cluster"]); err != nil || u.Port() == "" {
		t.Errorf("%s: --cluster %q names no port", name, flags["cluster"])
	} else {
		n.clusterPort = u.Port()
	}
	for r := range strings.SplitSeq(flags["routes"], ",") {
		if u, err := url.Parse(strings.TrimSpace(r)); err == nil && u.Host != "" {
			n.routes = append(n.routes, net.JoinHostPort(u.Hostname(), cmp.Or(u.Port(), "6222")))
		}
	}
	slices.Sort(n.routes)
	if store := flags["store_dir"]; store == "" {
		t.Errorf("%s has no store folder (-sd)", name)
	} else if m, ok := mountOf(t, s, store); !ok || !m.named() || m.target != path.Clean(store) {
		t.Errorf("%s: the store %s is not a named volume", name, store)
	} else {
		for other, o := range f.Services {
			for _, v := range o.Volumes {
				if other != name && parseMount(t, v).source == m.source {
					t.Errorf("%s's store volume %s is mounted by %s too", name, m.source, other)
				}
			}
		}
	}
	return n
}

// mount is one entry of a service's volumes.
type mount struct {
	source, target string
	readOnly       bool
}

// named reports whether the mount is a named volume rather than a host path
// or an anonymous volume.
func (m mount) named() bool {
	return m.source != "" && !strings.HasPrefix(m.source, ".") && !strings.HasPrefix(m.source, "/") &&
		!strings.HasPrefix(m.source, "~")
}

func parseMount(t *testing.T, v any) mount {
	t.Helper()
	switch v := v.(type) {
	case string:
		parts := strings.Split(v, ":")
		switch len(parts) {
		case 1:
			return mount{target: parts[0]}
		case 2:
			return mount{source: parts[0], target: parts[1]}
		default:
			return mount{source: parts[0], target: parts[1], readOnly: slices.Contains(strings.Split(parts[2], ","), "ro")}
		}
	case map[string]any:
		m := mount{source: fmt.Sprint(v["source"]), target: fmt.Sprint(v["target"])}
		if v["source"] == nil {
			m.source = ""
		}
		m.readOnly, _ = v["read_only"].(bool)
		return m
	}
	t.Errorf("volume entry %v has no form Compose knows", v)
	return mount{}
}

// mountOf is the service's mount that holds file, the deepest if several do.
func mountOf(t *testing.T, s *composeService, file string) (mount, bool) {
	t.Helper()
	var found mount
	ok := false
	for _, v := range s.Volumes {
		m := parseMount(t, v)
		target := path.Clean(m.target)
		if (file == target || strings.HasPrefix(file, target+"/")) && len(target) > len(found.target) {
			found, ok = mount{source: m.source, target: target, readOnly: m.readOnly}, true
		}
	}
	return found, ok
}

// keyWriter is the service that mounts volume writable and is no Herald
// service: the one that creates the delivery key. at is where it mounts it.
func keyWriter(t *testing.T, f composeFile, volume string) (name, at string) {
	t.Helper()
	for name, s := range f.Services {
		if s.Build != nil {
			continue
		}
		for _, v := range s.Volumes {
			if m := parseMount(t, v); m.source == volume && !m.readOnly {
				return name, path.Clean(m.target)
			}
		}
	}
	t.Fatalf("no service writes volume %s", volume)
	return "", ""
}

// dependsOn is the service's depends_on as condition by service; the list
// form means service_started.
func dependsOn(t *testing.T, s *composeService) map[string]string {
	t.Helper()
	deps := map[string]string{}
	switch d := s.DependsOn.(type) {
	case []any:
		for _, name := range d {
			deps[fmt.Sprint(name)] = "service_started"
		}
	case map[string]any:
		for name, spec := range d {
			cond := "service_started"
			if m, ok := spec.(map[string]any); ok && m["condition"] != nil {
				cond = fmt.Sprint(m["condition"])
			}
			deps[name] = cond
		}
	}
	return deps
}

// publishes reports whether the service publishes the container port that
// listen (host:port) names.
func publishes(t *testing.T, s *composeService, listen string) bool {
	t.Helper()
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Errorf("listen address %q: %v", listen, err)
		return false
	}
	for _, p := range s.Ports {
		var target string
		switch p := p.(type) {
		case int:
			target = strconv.Itoa(p)
		case string:
			p, _, _ = strings.Cut(p, "/")
			target = p[strings.LastIndex(p, ":")+1:]
		case map[string]any:
			target = fmt.Sprint(p["target"])
		}
		if target == port {
			return true
		}
	}
	return false
}
