// Package secret seals the secrets Herald keeps at rest (channel passwords)
// with AES-256-GCM. The key comes from configuration or is generated once into
// the data folder with mode 0600.
package secret
