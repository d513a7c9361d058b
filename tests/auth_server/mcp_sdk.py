"""The official MCP Python SDK completes its OAuth flow against Tolk's auth service.

Usage: python mcp_sdk.py AUTH_BASE MODE [METADATA_URL]

  AUTH_BASE     the auth service, e.g. http://localhost:8081 (host `localhost`:
                the tenant is chosen by the Host header)
  MODE          `dcr`: the SDK registers itself (RFC 7591, POST /auth/register);
                `cimd`: the SDK uses METADATA_URL, an https client ID metadata
                document naming the redirect URI below, as its client_id
  METADATA_URL  (cimd only) the document's URL

What it proves, with nothing but the SDK's own code on both ends of MCP:

1. An MCP server built with the SDK (`MCPServer`, one tool `echo`) runs in
   process on 127.0.0.1 and is addressed as http://localhost:PORT/mcp, so the
   RFC 8707 resource the SDK sends is on the authority's host. It is protected
   by the SDK's auth: unauthenticated requests get 401 with protected-resource
   metadata (RFC 9728) naming AUTH_BASE as the authorization server, and bearer
   tokens are checked by calling Tolk's /auth/userinfo. The server is strict
   about audiences (`validate_token_resource=True`): the token's `aud` must
   name this server's URL, as Tolk binds tokens to the resource asked for.
2. The SDK client (`OAuthClientProvider`, streamable HTTP) discovers Tolk from
   that metadata (RFC 8414), registers or uses the metadata document URL,
   sends the user to /auth/authorize with PKCE S256, and the browser part is
   played here: sign in (POST /auth/signin), load the consent page, approve
   it. The SDK then checks state and the RFC 9207 `iss`, redeems the code at
   /auth/token and retries the MCP request with the access token.
3. The `echo` tool answers "hello" through the authenticated session.

On success one JSON line is printed, {"ok": true, "client_id": ..., "mode": ...},
and the exit status is 0; on any failure the error goes to stderr and the exit
status is 1. Everything runs under one deadline.
"""

import base64
import html
import json
import logging
import os
import re
import socket
import sys
import threading
import traceback
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import uvicorn
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:53682/callback"
EMAIL = "ann@example.com"
PASSWORD = "correct horse"
SESSION_COOKIE = "_coauth_session"
DEADLINE_SECONDS = 60


def audience(token: str, resource_url: str) -> str | None:
    """The token's `aud` entry naming `resource_url` (a string or a list), read
    from the JWT once the authority has accepted the token."""
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    aud = claims.get("aud")
    names = aud if isinstance(aud, list) else [aud]
    return resource_url if resource_url in names else (names[0] if names else None)


class UserinfoVerifier(TokenVerifier):
    """A token is valid when Tolk's userinfo endpoint accepts it; its resource
    is what its `aud` names."""

    def __init__(self, auth_base: str, resource_url: str):
        self.userinfo = f"{auth_base}/auth/userinfo"
        self.resource_url = resource_url

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            async with httpx2.AsyncClient(timeout=10) as http:
                res = await http.get(self.userinfo, headers={"Authorization": f"Bearer {token}"})
        except httpx2.HTTPError as e:
            print(f"userinfo could not be reached: {e!r}", file=sys.stderr)
            return None
        if res.status_code != 200:
            print(f"userinfo refused the token: {res.status_code} {res.text}", file=sys.stderr)
            return None
        info = res.json()
        scope = info.get("scope") or []
        scopes = scope.split() if isinstance(scope, str) else [str(s) for s in scope]
        return AccessToken(
            token=token,
            client_id=str(info.get("client_id") or "unknown"),
            scopes=scopes,
            subject=info.get("sub"),
            resource=audience(token, self.resource_url),
        )


class MemoryStorage(TokenStorage):
    """Tokens and client information, kept for this run only."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Browser:
    """Plays the user's browser: signs in, approves the consent page, and
    keeps what the redirect to REDIRECT_URI carried for the callback handler."""

    def __init__(self, auth_base: str):
        self.auth_base = auth_base
        self.result: AuthorizationCodeResult | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=15, follow_redirects=False) as http:
            res = await http.post(
                f"{self.auth_base}/auth/signin",
                json={"email": EMAIL, "password": PASSWORD},
            )
            expect(res, 202, "sign-in")
            cookie = session_cookie(res)

            res = await http.get(authorization_url, headers={"Cookie": cookie})
            expect(res, 200, "the consent page")
            fields = hidden_fields(res.text)
            if "consent_token" not in fields:
                raise RuntimeError(f"the consent page has no consent_token:\n{res.text}")

            res = await http.post(
                f"{self.auth_base}/auth/authorize",
                data={**fields, "consent": "allow"},
                headers={"Cookie": cookie},
            )
            expect(res, 302, "the consent answer")
            location = res.headers["location"]
            if not location.startswith(REDIRECT_URI + "?"):
                raise RuntimeError(f"the consent answer redirected elsewhere: {location}")
            query = {k: v[0] for k, v in parse_qs(urlparse(location).query).items()}
            if "code" not in query:
                raise RuntimeError(f"the redirect carries no code: {location}")
            self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback_handler(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise RuntimeError("no authorization code was received")
        result, self.result = self.result, None
        return result


def expect(res: httpx2.Response, status: int, what: str) -> None:
    if res.status_code != status:
        raise RuntimeError(
            f"{what}: {res.request.method} {res.request.url} answered {res.status_code}, "
            f"expected {status}\n{dict(res.headers)}\n{res.text[:2000]}"
        )


def session_cookie(res: httpx2.Response) -> str:
    """`name=value` of the session cookie among the response's Set-Cookie headers."""
    for header in res.headers.get_list("set-cookie"):
        pair = header.split(";", 1)[0].strip()
        name, _, value = pair.partition("=")
        if name == SESSION_COOKIE and value:
            return pair
    raise RuntimeError(f"sign-in set no {SESSION_COOKIE} cookie: {res.headers.get_list('set-cookie')}")


def hidden_fields(page: str) -> dict[str, str]:
    """The hidden inputs of the consent form (attribute values are HTML-escaped)."""
    return {
        html.unescape(name): html.unescape(value)
        for name, value in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)"', page)
    }


def mcp_server(auth_base: str, resource_url: str) -> MCPServer:
    server = MCPServer(
        "Tolk OAuth check",
        token_verifier=UserinfoVerifier(auth_base, resource_url),
        auth=AuthSettings(
            issuer_url=auth_base,
            resource_server_url=resource_url,
            required_scopes=["public"],
            # Tolk's access tokens name the resource they were asked for:
            # refuse any token not issued for this server.
            validate_token_resource=True,
        ),
        log_level="WARNING",
    )

    @server.tool()
    def echo(text: str) -> str:
        """Returns the text it is given."""
        return text

    return server


async def run(auth_base: str, mode: str, metadata_url: str | None) -> str:
    """Serves the MCP server, connects to it through the OAuth flow, calls
    `echo`; returns the client ID the SDK used."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server_url = f"http://localhost:{port}/mcp"

    app = mcp_server(auth_base, server_url).streamable_http_app(host="127.0.0.1")
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(uv.serve, [listener])
        while not uv.started:
            if uv.should_exit:
                raise RuntimeError("the MCP server did not start")
            await anyio.sleep(0.05)
        try:
            storage = MemoryStorage()
            browser = Browser(auth_base)
            oauth = OAuthClientProvider(
                server_url=server_url,
                client_metadata=OAuthClientMetadata(
                    client_name="MCP SDK test",
                    redirect_uris=[REDIRECT_URI],
                    grant_types=["authorization_code", "refresh_token"],
                    response_types=["code"],
                    token_endpoint_auth_method="none",
                    # The SDK asks for the scopes the protected resource
                    # names instead ("public"), plus offline_access, which
                    # Tolk's discovery offers, for a refresh token.
                    scope="openid public",
                ),
                storage=storage,
                redirect_handler=browser.redirect_handler,
                callback_handler=browser.callback_handler,
                client_metadata_url=metadata_url if mode == "cimd" else None,
            )
            async with httpx2.AsyncClient(auth=oauth, timeout=30) as http:
                async with streamable_http_client(server_url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        result = await session.call_tool("echo", {"text": "hello"})
            if result.is_error:
                raise RuntimeError(f"echo failed: {result}")
            texts = [getattr(c, "text", "") for c in result.content]
            if not any("hello" in t for t in texts):
                raise RuntimeError(f"echo answered {result}")
            if storage.tokens is None or storage.client_info is None:
                raise RuntimeError("the SDK stored no tokens or no client information")
            client_id = storage.client_info.client_id
        finally:
            uv.should_exit = True

    if mode == "cimd" and client_id != metadata_url:
        raise RuntimeError(f"the SDK used client_id {client_id}, not the metadata document {metadata_url}")
    return client_id


def main() -> int:
    args = sys.argv[1:]
    if len(args) not in (2, 3) or args[1] not in ("dcr", "cimd") or (args[1] == "cimd") != (len(args) == 3):
        print(__doc__, file=sys.stderr)
        return 1
    auth_base, mode = args[0].rstrip("/"), args[1]
    metadata_url = args[2] if len(args) == 3 else None
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    # Should a step hang where cancellation cannot reach, end the process anyway.
    def give_up() -> None:
        print(f"gave up after {DEADLINE_SECONDS + 10} s", file=sys.stderr)
        os._exit(1)

    watchdog = threading.Timer(DEADLINE_SECONDS + 10, give_up)
    watchdog.daemon = True
    watchdog.start()

    async def bounded() -> str:
        with anyio.fail_after(DEADLINE_SECONDS):
            return await run(auth_base, mode, metadata_url)

    try:
        client_id = anyio.run(bounded)
    except BaseException:  # noqa: BLE001 - everything is a failure of the check
        traceback.print_exc()
        return 1
    print(json.dumps({"ok": True, "client_id": client_id, "mode": mode}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
