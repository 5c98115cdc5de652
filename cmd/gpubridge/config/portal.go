package config

// Portal configures the tenant portal (cmd/gpubridge/api, docs/portal.md).
type Portal struct {
	// JWTKeyFile is the HS256 key of the Slurm JWTs people sign in with
	// (`scontrol token`; Slurm's AuthAltParameters=jwt_key=...). Empty:
	// slurmrest.jwtKeyFile, the key slurmrestd's tokens are made with.
	JWTKeyFile string `json:"jwtKeyFile"`
	// JWKSFile is the JWKS (JSON Web Key Set) whose RSA public keys verify
	// RS256 Slurm JWTs, the file of Slurm's AuthAltParameters=jwks=...
	// (empty: RS256 tokens are refused). Read at the first sign-in and
	// again at most once a minute.
	JWKSFile string `json:"jwksFile"`
}

// PortalJWTKeyFile is the key file people's Slurm JWTs are verified
// with: portal.jwtKeyFile, else slurmrest.jwtKeyFile (empty: person
// sign-in is off).
func (c Config) PortalJWTKeyFile() string {
	if c.Portal.JWTKeyFile != "" {
		return c.Portal.JWTKeyFile
	}
	return c.SlurmRest.JWTKeyFile
}
