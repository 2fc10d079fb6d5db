# DPEXPLORE_HUB_AUTH=oauth: students log in with the institution's OpenID Connect / OAuth 2 provider
# (Keycloak, Azure AD, Google Workspace, GitLab, ...), through the `oauthenticator` package
# (pip install oauthenticator). Register the hub with the provider: its callback URL is
# <DPEXPLORE_HUB_URL>/hub/oauth_callback.
# Read by dpexplore.hub.settings.configure, which gives this file `c` (the configuration), `env` (the
# environment) and `roster_names` (the names on the roster file, if any).
c.JupyterHub.authenticator_class = "generic-oauth"
c.GenericOAuthenticator.client_id = env["DPEXPLORE_HUB_OAUTH_CLIENT_ID"]
c.GenericOAuthenticator.client_secret = env["DPEXPLORE_HUB_OAUTH_CLIENT_SECRET"]
c.GenericOAuthenticator.authorize_url = env["DPEXPLORE_HUB_OAUTH_AUTHORIZE_URL"]
c.GenericOAuthenticator.token_url = env["DPEXPLORE_HUB_OAUTH_TOKEN_URL"]
c.GenericOAuthenticator.userdata_url = env["DPEXPLORE_HUB_OAUTH_USERDATA_URL"]
c.GenericOAuthenticator.username_claim = env.get("DPEXPLORE_HUB_OAUTH_USERNAME_CLAIM", "preferred_username")
c.GenericOAuthenticator.scope = ["openid", "profile"]
c.GenericOAuthenticator.oauth_callback_url = env.get("DPEXPLORE_HUB_URL", "").rstrip("/") + "/hub/oauth_callback"
# the class is the roster: names from the provider that are not on it get no server
if roster_names:
    c.GenericOAuthenticator.allowed_users = set(roster_names)
else:
    raise ValueError(
        "DPEXPLORE_HUB_AUTH=oauth needs a roster (DPEXPLORE_HUB_USERS or "
        "dpexplore hub-users add): any account of the provider could log in otherwise"
    )
