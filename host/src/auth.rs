//! Identities and tokens, as the official server issues them.
//!
//! A token is an ES256 JWT signed with a key pair that is generated on first start and kept in
//! the data dir (`id_ecdsa`, `id_ecdsa.pub`), so a client that keeps its token keeps its identity
//! across restarts. The identity is derived from the token's `iss`/`sub` claims exactly as the
//! engine does (`Identity::from_claims`), with `iss = "localhost"` like a standalone server.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use spacetimedb::auth::identity::{ConnectionAuthCtx, EncodingKey, SpacetimeIdentityClaims};
use spacetimedb::auth::token_validation::{TokenSigner as _, TokenValidator as _};
use spacetimedb::auth::{EcKeyPair, JwtKeys};
use spacetimedb_lib::Identity;

/// The issuer of tokens minted here; the official standalone server uses the same.
const LOCAL_ISSUER: &str = "localhost";

/// Most verified tokens remembered; the cache is simply emptied when it fills.
const VERIFIED_CACHE_SIZE: usize = 10_000;

/// Signs and verifies client tokens.
pub struct Auth {
    keys: JwtKeys,
    /// Tokens whose signature was already checked. An ES256 check costs ~0.35 ms, most of a
    /// loopback call's round trip; a token never changes and the key never rotates, so only the
    /// expiry needs checking again.
    verified: Mutex<HashMap<String, Caller>>,
}

/// A caller authenticated by a verified (or freshly minted) token.
#[derive(Clone)]
pub struct Caller {
    pub identity: Identity,
    pub token: String,
    pub claims: SpacetimeIdentityClaims,
}

impl Caller {
    /// What the engine's `client_connected` bookkeeping wants to know about the caller.
    pub fn connection_auth(&self) -> anyhow::Result<ConnectionAuthCtx> {
        ConnectionAuthCtx::try_from(self.claims.clone())
    }
}

impl Auth {
    /// Loads the key pair from `dir`, generating and saving one on first use.
    pub fn load_or_create(dir: &Path) -> anyhow::Result<Self> {
        let (public, private) = (dir.join("id_ecdsa.pub"), dir.join("id_ecdsa"));
        let pair = match (std::fs::read(&public), std::fs::read(&private)) {
            (Ok(public), Ok(private)) => EcKeyPair::new(public, private),
            (Err(_), Err(_)) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let pair = EcKeyPair::generate()?;
                write_private(&private, &pair.private_key_bytes)?;
                std::fs::write(&public, &pair.public_key_bytes)?;
                pair
            }
            _ => anyhow::bail!(
                "only one of {} and {} exists",
                public.display(),
                private.display()
            ),
        };
        let keys = JwtKeys::try_from(pair).context("reading the JWT key pair")?;
        Ok(Self {
            keys,
            verified: Mutex::new(HashMap::new()),
        })
    }

    /// The public key that verifies this host's tokens (PEM), as `/v1/identity/public-key`
    /// serves it.
    pub fn public_key_pem(&self) -> &[u8] {
        &self.keys.public_pem
    }

    /// The key that signs inter-database messages (the engine requires one to start a host).
    pub fn signing_key(&self) -> EncodingKey {
        self.keys.private.clone()
    }

    /// Mints a fresh identity (random subject) and its token, like `POST /v1/identity`.
    pub fn mint(&self) -> anyhow::Result<Caller> {
        let subject = random_subject();
        let claims = SpacetimeIdentityClaims {
            identity: Identity::from_claims(LOCAL_ISSUER, &subject),
            subject: subject.into(),
            issuer: LOCAL_ISSUER.into(),
            audience: ["spacetimedb".into()].into(),
            iat: SystemTime::now(),
            exp: None,
            extra: None,
        };
        let token = self.keys.sign(&claims)?;
        Ok(Caller {
            identity: claims.identity,
            token,
            claims,
        })
    }

    /// A token for `caller`'s identity that expires `ttl` from now, signed here (as the
    /// official `re_sign_with_expiry`).
    pub fn short_lived(&self, caller: &Caller, ttl: Duration) -> anyhow::Result<String> {
        let iat = SystemTime::now();
        let claims = SpacetimeIdentityClaims {
            iat,
            exp: Some(iat + ttl),
            ..caller.claims.clone()
        };
        Ok(self.keys.sign(&claims)?)
    }

    /// Verifies a token's signature and claims.
    ///
    /// Only tokens signed by this host's key are accepted: the official server would also try
    /// OpenID-Connect issuers over the network, which a loopback test host has no use for.
    pub async fn verify(&self, token: &str) -> Result<Caller, String> {
        let unexpired = |c: &Caller| c.claims.exp.is_none_or(|exp| exp > SystemTime::now());
        if let Some(caller) = self
            .verified
            .lock()
            .unwrap()
            .get(token)
            .filter(|c| unexpired(c))
        {
            return Ok(caller.clone());
        }
        let claims = self
            .keys
            .public
            .validate_token(token)
            .await
            .map_err(|e| format!("{e:#}"))?;
        let caller = Caller {
            identity: claims.identity,
            token: token.to_owned(),
            claims,
        };
        let mut verified = self.verified.lock().unwrap();
        if verified.len() >= VERIFIED_CACHE_SIZE {
            verified.clear();
        }
        verified.insert(token.to_owned(), caller.clone());
        Ok(caller)
    }
}

/// A fresh identity nobody holds a token for: what the official server gives a new database.
pub fn random_identity() -> Identity {
    Identity::from_claims(LOCAL_ISSUER, &random_subject())
}

/// A random JWT subject (the official server uses a UUIDv4; any unique string will do).
fn random_subject() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Writes the private key readable by the owner only.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}
