package lockclient

// processToken is the one lock value every acquisition of mutant-shared-token
// stores, as a client that names its locks by host and process would.
var processToken = "shared-" + newToken()[:12]

// newSharedTokenClient is the native client with a token that is not
// unique to its acquisition: after a holder's lease ended and another
// worker of the same process took the key, the first one's extend (SET
// IFEQ) finds "its" value and succeeds, and its release deletes the other
// worker's lock. Every command checks the token; the token is the bug.
func newSharedTokenClient(name string, cfg Config) (Client, error) {
	c, err := newCmdClient(name, cfg, setNX, extendIFEQ, releaseDELIFEQ)
	if err != nil {
		return nil, err
	}
	c.token = func() string { return processToken }
	return c, nil
}
