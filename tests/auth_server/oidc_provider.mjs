// node-oidc-provider (npm `oidc-provider`, the reference OpenID Connect
// provider) as a tenant's upstream identity provider in the OAuth sign-in
// tests. Settings come from the environment:
//   TOLK_TEST_NODE       folder whose node_modules holds oidc-provider
//   OIDC_PORT            port to listen on (127.0.0.1)
//   OIDC_CLIENT          JSON: {client_id, client_secret, redirect_uris}
// Any login name signs in (the provider's development interactions); the
// account's email is the login name. PKCE is required of every client, so a
// sign-in that works proves Tolk sends it. Prints "ready" when listening.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = join(process.env.TOLK_TEST_NODE, 'node_modules', 'oidc-provider', 'lib', 'index.js');
const { default: Provider } = await import(pathToFileURL(modules).href);

const port = Number(process.env.OIDC_PORT);
const client = JSON.parse(process.env.OIDC_CLIENT);

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    ...client,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: `subject-${id}`, email: id, email_verified: true, name: `Name of ${id}` };
      },
    };
  },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  pkce: { required: () => true },
  cookies: { keys: ['tolk e2e upstream cookie key'] },
  features: { devInteractions: { enabled: true } },
});
provider.proxy = false;
provider.on('server_error', (ctx, err) => console.error('server_error', err));
provider.on('grant.error', (ctx, err) => console.error('grant.error', err.message, err.error_description));
provider.listen(port, '127.0.0.1', () => console.log('ready'));
