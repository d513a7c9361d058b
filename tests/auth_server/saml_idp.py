"""A SAML 2.0 identity provider made with pysaml2 (Debian's python3-pysaml2,
signing with xmlsec1) for the SAML sign-in tests.

Arguments: PORT KEY_PEM CERT_PEM SP_ENTITY_ID ACS_URL
GET /sso/redirect?SAMLRequest=…&RelayState=…  parses the AuthnRequest
(redirect binding) and answers the POST-binding form a browser would submit:
a response for the user "grace" with a signed assertion.
GET /mode?name=…  sets how the next responses are made: normal (RSA-SHA256),
unsigned (nothing signed) or sha1 (signed with RSA-SHA1, pysaml2's default).
Prints "ready" once listening.
"""

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.config import IdPConfig
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NameID
from saml2.server import Server
from saml2.xmldsig import DIGEST_SHA1, DIGEST_SHA256, SIG_RSA_SHA1, SIG_RSA_SHA256

port, key_file, cert_file, sp_entity_id, acs_url = sys.argv[1:6]
base = f"http://127.0.0.1:{port}"

sp_metadata = f"""<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="{sp_entity_id}">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"
      AuthnRequestsSigned="false" WantAssertionsSigned="true">
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
        Location="{acs_url}" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>"""

config = IdPConfig()
config.load({
    "entityid": f"{base}/idp",
    "service": {
        "idp": {
            "endpoints": {
                "single_sign_on_service": [(f"{base}/sso/redirect", BINDING_HTTP_REDIRECT)],
            },
            "policy": {"default": {"lifetime": {"minutes": 15}, "attribute_restrictions": None}},
            "name_id_format": [NAMEID_FORMAT_PERSISTENT],
        },
    },
    "key_file": key_file,
    "cert_file": cert_file,
    "xmlsec_binary": "/usr/bin/xmlsec1",
    "metadata": {"inline": [sp_metadata]},
})
idp = Server(config=config)
mode = {"name": "normal"}
lock = threading.Lock()

USER = {
    "uid": ["grace"],
    "mail": ["grace@example.org"],
    "givenName": ["Grace"],
    "sn": ["Hopper"],
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="text/html"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/mode":
            with lock:
                mode["name"] = query.get("name", "normal")
            return self.answer(200, "ok", "text/plain")
        if url.path != "/sso/redirect":
            return self.answer(404, "not found", "text/plain")
        try:
            request = idp.parse_authn_request(query["SAMLRequest"], BINDING_HTTP_REDIRECT)
        except Exception as e:  # a request pysaml2 cannot read
            return self.answer(400, f"bad AuthnRequest: {e}", "text/plain")
        message = request.message
        with lock:
            name = mode["name"]
        signed = name != "unsigned"
        sha1 = name == "sha1"
        response = idp.create_authn_response(
            identity=USER,
            in_response_to=message.id,
            destination=acs_url,
            sp_entity_id=sp_entity_id,
            userid="grace",
            name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text="grace-persistent-id"),
            authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:Password",
                   "authn_auth": f"{base}/idp"},
            sign_assertion=signed,
            sign_response=False,
            sign_alg=SIG_RSA_SHA1 if sha1 else SIG_RSA_SHA256,
            digest_alg=DIGEST_SHA1 if sha1 else DIGEST_SHA256,
        )
        http = idp.apply_binding(BINDING_HTTP_POST, str(response), destination=acs_url,
                                 relay_state=query.get("RelayState", ""), response=True)
        self.answer(200, http["data"])


server = ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
print("ready", flush=True)
server.serve_forever()
