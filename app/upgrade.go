package app

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// engineCredentials is the file in which versions whose engine called the
// API as a service account kept that account's password in clear text.
const engineCredentials = "engine.credentials"

// removeEngineCredentials removes the service account's credentials file
// from a data folder of such a version, and says so once; the store's
// migration has removed the account, its sessions and their tokens.
func (a *App) removeEngineCredentials() {
	path := filepath.Join(a.cfg.Data, engineCredentials)
	switch err := os.Remove(path); {
	case err == nil:
		a.log.Info("removed the engine's service account, its sessions and its credentials file: the engine runs each subscription as its owner, in process",
			"file", path)
	case !errors.Is(err, fs.ErrNotExist):
		a.log.Warn("remove the former engine's credentials file; its account is gone, so the file opens nothing, but delete it",
			"file", path, "err", err)
	}
}

// runFiles is the folder of the files runs attach, named by their content.
func runFiles(cfg Config) string { return filepath.Join(cfg.Data, "runs") }
