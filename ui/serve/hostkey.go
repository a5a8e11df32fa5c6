package serve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// HostKey reads the server's ed25519 host key from path, or generates one there (mode 0600, in
// a folder made 0700 if missing) the first time, so that the fingerprint the attendees accept
// stays the same from one workshop to the next. created says which happened. A key file that
// others may read, or that is not a regular file, is refused, as OpenSSH refuses it.
func HostKey(path string) (signer gossh.Signer, created bool, err error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		signer, err = createHostKey(path)
		return signer, err == nil, err
	case err != nil:
		return nil, false, fmt.Errorf("host key %s: %w", path, err)
	case !info.Mode().IsRegular():
		return nil, false, fmt.Errorf("host key %s: not a regular file", path)
	case info.Mode().Perm()&0o077 != 0:
		return nil, false, fmt.Errorf("host key %s: mode %04o lets others read it; chmod 600 %s", path, info.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("host key %s: %w", path, err)
	}
	signer, err = gossh.ParsePrivateKey(data)
	if err != nil {
		return nil, false, fmt.Errorf("host key %s: not a private key in OpenSSH/PEM form: %w", path, err)
	}
	return signer, false, nil
}

func createHostKey(path string) (gossh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "leaselab serve host key")
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("host key folder: %w", err)
	}
	// O_EXCL: two servers started at once never overwrite each other's key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	return gossh.NewSignerFromKey(priv)
}

// Fingerprint is the key's SHA256 fingerprint as ssh prints it: "SHA256:…".
func Fingerprint(k gossh.PublicKey) string { return gossh.FingerprintSHA256(k) }
