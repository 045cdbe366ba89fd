package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/heraldhq/herald/client"
	"github.com/heraldhq/herald/store"
)

// serviceLogin is the login of the account the engine uses to call the API.
const serviceLogin = "herald-engine@service.invalid"

type credentials struct {
	Login    string `json:"login"`
	Password string `json:"password"`
}

// serviceAccount makes sure the engine's account exists and its credentials
// are in the data folder (mode 0600), and returns them. The account is a
// domain admin that listings never show.
func (a *App) serviceAccount(ctx context.Context) (credentials, error) {
	path := filepath.Join(a.cfg.Data, "engine.credentials")
	var cred credentials
	if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &cred) == nil && cred.Password != "" {
		if _, err := a.store.UserByLogin(ctx, cred.Login); err == nil {
			return cred, nil
		}
	}
	cred = credentials{Login: serviceLogin, Password: rand.Text() + rand.Text()}
	hash, err := bcrypt.GenerateFromPassword([]byte(cred.Password), a.cfg.Auth.PasswordCost)
	if err != nil {
		return cred, err
	}
	now := a.opt.Clock.Now()
	u, err := a.store.UserByLogin(ctx, serviceLogin)
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = a.store.CreateUser(ctx, store.User{ID: store.NewID(32), Domain: a.cfg.Domain, Login: serviceLogin,
			PasswordHash: string(hash), FirstName: "Herald", LastName: "Engine", IsDomainAdmin: true, IsService: true,
			Created: now, Updated: now})
	case err == nil:
		err = a.store.SetPassword(ctx, u.ID, string(hash), now)
	}
	if err != nil {
		return cred, fmt.Errorf("service account: %w", err)
	}
	data, _ := json.Marshal(cred)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return cred, fmt.Errorf("write service credentials: %w", err)
	}
	return cred, nil
}

// serviceClient returns a client of this process's own API that acts as the
// engine's service account.
func (a *App) serviceClient(cred credentials) (*client.Client, error) {
	hc := &http.Client{Timeout: 5 * time.Minute}
	if a.cfg.HTTP.TLSCert != "" {
		pem, err := os.ReadFile(a.cfg.HTTP.TLSCert)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	// The client logs in on the first request that asks for it, and again
	// whenever its login ends.
	return client.New(a.URL(), client.WithHTTPClient(hc), client.WithUserAgent("herald-engine"),
		client.WithLogin(cred.Login, cred.Password)), nil
}
