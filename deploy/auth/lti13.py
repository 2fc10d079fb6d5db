# DPEXPLORE_HUB_AUTH=lti13: students log in from the course's LMS (Canvas, Moodle, ...) with LTI 1.3,
# through the `jupyterhub-ltiauthenticator` package (pip install jupyterhub-ltiauthenticator).
# Register the hub in the LMS as an LTI 1.3 tool: its login URL is <DPEXPLORE_HUB_URL>/hub/lti13/oauth_login,
# its redirect URL <DPEXPLORE_HUB_URL>/hub/lti13/oauth_callback, its key set <DPEXPLORE_HUB_URL>/hub/lti13/jwks.
# Read by dpexplore.hub.settings.configure, which gives this file `c` (the configuration), `env` (the
# environment) and `roster_names` (the names on the roster file, if any).
c.JupyterHub.authenticator_class = "ltiauthenticator.lti13.auth.LTI13Authenticator"
c.LTI13Authenticator.client_id = {env["DPEXPLORE_HUB_LTI13_CLIENT_ID"]}
c.LTI13Authenticator.issuer = env["DPEXPLORE_HUB_LTI13_ISSUER"]
c.LTI13Authenticator.authorize_url = env["DPEXPLORE_HUB_LTI13_AUTHORIZE_URL"]
c.LTI13Authenticator.jwks_endpoint = env["DPEXPLORE_HUB_LTI13_JWKS_URL"]
# the student's name: the e-mail address the LMS sends (made into an account name by the spawner)
c.LTI13Authenticator.username_key = "email"
# only the launches of the course(s) configured in the LMS reach the hub; with a roster file,
# only its names are let in as well
if roster_names:
    c.Authenticator.allowed_users = set(roster_names)
else:
    c.Authenticator.allow_all = True
