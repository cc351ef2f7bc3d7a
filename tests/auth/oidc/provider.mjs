// A real OAuth 2 / OpenID Connect authorization server for mcpbind's end-to-end auth tests:
// oidc-provider (pinned in package-lock.json), on 127.0.0.1, a free port, headless.
//
// Turned on: authorization code + PKCE (S256), refresh tokens (rotated for public clients),
// resource indicators (RFC 8707: JWT access tokens whose `aud` is the requested resource),
// dynamic client registration (RFC 7591, open), client credentials, introspection (RFC 7662).
// The interaction (login and consent) is automatic: the test user `alice` is logged in and
// every requested scope granted, so a client that follows the redirects (keeping the
// provider's cookies) reaches its redirect_uri with `code`, `state` and `iss`.
//
// Prints one JSON line {"issuer": ..., "port": ...} once it listens; stops on SIGTERM.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

const RESOURCE_SCOPES = 'mcp:read mcp:write mcp:admin';

// Pre-registered confidential clients (client_secret_basic / client_secret_post).
//   mcp-service  client credentials, JWT access tokens
//   mcp-short    client credentials, JWT access tokens that expire after 2 seconds
//   mcp-opaque   client credentials, opaque access tokens (checked by introspection)
//   mcp-rs       the resource server itself: may call the introspection endpoint
const CLIENTS = [
  { client_id: 'mcp-service', client_secret: 'service-secret' },
  { client_id: 'mcp-short', client_secret: 'short-secret' },
  { client_id: 'mcp-opaque', client_secret: 'opaque-secret' },
  { client_id: 'mcp-rs', client_secret: 'rs-secret' },
].map((client) => ({
  ...client,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  scope: RESOURCE_SCOPES,
}));

function signingKeys() {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  return { keys: [{ ...rsa, kid: 'rsa-1', use: 'sig', alg: 'RS256' }, { ...ec, kid: 'ec-1', use: 'sig', alg: 'ES256' }] };
}

// Any http(s) URL on the loopback interface is a resource server of this test provider.
function isLoopbackResource(indicator) {
  try {
    const url = new URL(indicator);
    return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) && !url.hash;
  } catch {
    return false;
  }
}

// `mcp-short`, and registered clients named `short-lived`: access tokens valid 2 seconds.
function shortLived(client) {
  return client.clientId === 'mcp-short' || client.clientName === 'short-lived';
}

async function getResourceServerInfo(_ctx, resourceIndicator, client) {
  if (!isLoopbackResource(resourceIndicator)) {
    throw new Provider.errors.InvalidTarget();
  }
  const opaque = client.clientId === 'mcp-opaque';
  return {
    scope: RESOURCE_SCOPES,
    audience: resourceIndicator,
    accessTokenTTL: shortLived(client) ? 2 : 600,
    accessTokenFormat: opaque ? 'opaque' : 'jwt',
    ...(opaque ? {} : { jwt: { sign: { alg: 'ES256' } } }),
  };
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: CLIENTS,
    jwks: signingKeys(),
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES.split(' ')],
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // Refresh tokens for every client allowed the grant (offline_access not needed).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // The token request may omit `resource` when the authorization request named one.
        useGrantedResource: async () => true,
        getResourceServerInfo,
      },
    },
    // Access tokens live as long as getResourceServerInfo says (accessTokenTTL).
    ttl: { RefreshToken: 3600 },
  });
  provider.proxy = false;

  const callback = provider.callback();
  server.on('request', async (req, res) => {
    if (!req.url.startsWith('/interaction/')) {
      callback(req, res);
      return;
    }
    try {
      await interact(provider, req, res);
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });
  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
});

// Log the test user in, then grant everything asked for: no page, only redirects.
async function interact(provider, req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'alice' } }, {
      mergeWithLastSubmission: false,
    });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, {
    mergeWithLastSubmission: true,
  });
}

process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
