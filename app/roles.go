package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldhq/herald/worker"
)

// Roles a process can have (Config.Roles).
const (
	// RoleAPI serves the HTTP API and the console.
	RoleAPI = "api"
	// RoleEngine fires subscriptions, evaluates and renders them, and hands
	// their deliveries over to the relay.
	RoleEngine = "engine"
	// RoleWorker sends deliveries through the channel kinds' senders.
	RoleWorker = "worker"
)

// has reports whether the process has role.
func (c *Config) has(role string) bool { return slices.Contains(c.Roles, role) }

// control reports whether the process is the control process: the API and
// the engine over the SQLite store, and the relay of its deliveries.
func (c *Config) control() bool { return c.has(RoleAPI) || c.has(RoleEngine) }

// validateRoles checks the roles and what each asks of the rest of the
// configuration, naming the key to change.
func (c *Config) validateRoles() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if len(c.Roles) == 0 {
		bad("roles", "must name at least one of api, engine, worker")
	}
	for i, r := range c.Roles {
		switch {
		case r != RoleAPI && r != RoleEngine && r != RoleWorker:
			bad(fmt.Sprintf("roles[%d]", i), "%q is not one of api, engine, worker", r)
		case slices.Index(c.Roles, r) != i:
			bad(fmt.Sprintf("roles[%d]", i), "%q is named twice", r)
		}
	}
	if c.has(RoleAPI) != c.has(RoleEngine) {
		bad("roles", "api and engine share the SQLite store and run in one process: name both or neither")
	}
	if c.NATS.Replicas < 1 || c.NATS.Replicas > 5 {
		bad("nats.replicas", "must be 1 to 5, got %d", c.NATS.Replicas)
	}
	if c.has(RoleWorker) != c.control() && c.Delivery.Ledger != worker.LedgerJetStream {
		bad("delivery.ledger", "must be jetstream when the senders and the engine run in different processes (roles %s)",
			strings.Join(c.Roles, ","))
	}
	if !c.control() {
		if c.NATS.URL == "" {
			bad("nats.url", "a process with only the worker role needs the NATS servers of the control process")
		}
		if c.Delivery.KeyFile == "" {
			bad("delivery.keyFile", "a process with only the worker role needs the control process's delivery key file")
		}
	}
	return errors.Join(errs...)
}
