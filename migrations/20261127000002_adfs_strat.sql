-- Sign-in through a tenant's SAML 2.0 identity provider: one `adfs_strat` row
-- per provider, with the earlier deployment's columns (the typo'd
-- `issuidp_slo_target_urler` included). Users are resolved like OAuth
-- sign-ins (user_auth_lookups with provider = the strategy id).

CREATE TABLE adfs_strat (
    -- "adfs_strat-" followed by 14 base-62 characters.
    id                                  text PRIMARY KEY,
    authority_id                        uuid NOT NULL REFERENCES authorities (id) ON DELETE CASCADE,
    name                                text NOT NULL,
    -- our entity id (the audience the assertions must name).
    issuer                              text NOT NULL,
    -- the identity provider's single sign-on URL (redirect binding).
    idp_sso_target_url                  text NOT NULL,
    -- extra query parameters of the sign-on URL.
    idp_sso_target_url_runtime_params   jsonb NOT NULL DEFAULT '{}',
    name_identifier_format              text NOT NULL DEFAULT '',
    -- the attribute holding the user's stable id (empty: the NameID).
    uid_attribute                       text NOT NULL DEFAULT '',
    -- our assertion consumer service URL (empty: /auth/saml/callback/{id} on
    -- the request's host).
    assertion_consumer_service_url      text NOT NULL DEFAULT '',
    -- the identity provider's signing certificate (PEM or base64 DER), or
    -- its SHA-1/SHA-256 fingerprint.
    idp_cert                            text NOT NULL DEFAULT '',
    idp_cert_fingerprint                text NOT NULL DEFAULT '',
    attribute_service_name              text NOT NULL DEFAULT '',
    -- our field -> [attribute names] (name, email, first_name, last_name, …).
    attribute_statements                jsonb NOT NULL DEFAULT '{}',
    request_attributes                  jsonb NOT NULL DEFAULT '[]',
    issuidp_slo_target_urler            text NOT NULL DEFAULT '',
    slo_default_relay_state             text NOT NULL DEFAULT '',
    created_at                          timestamptz NOT NULL DEFAULT now(),
    updated_at                          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX adfs_strat_authority ON adfs_strat (authority_id);

-- Assertions already consumed (their ID, until they expire): a replayed
-- response is refused.
CREATE TABLE saml_assertions_seen (
    id          text PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX saml_assertions_seen_expiry ON saml_assertions_seen (expires_at);
