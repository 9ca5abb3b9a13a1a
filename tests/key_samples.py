"""Keys of every format :data:`toolsearch_lab.secrets.KEY_FORMATS` supports, random in each issuer's
documented shape, built at run time: no key is written in the repository (a code host's secret scanning
would refuse the push, and rightly)."""

from __future__ import annotations

import base64
import random
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def sample_keys(seed: int = 48) -> dict[str, str]:
    """One key per supported format, random in the documented shape."""
    rng = random.Random(seed)

    def r(alphabet: str, n: int) -> str:  # always holds a digit, as generated keys do
        digits = [c for c in alphabet if c.isdigit()] or string.digits
        return "".join(rng.choices(alphabet, k=n - 1)) + rng.choice(digits)

    header, claims = _b64url('{"alg":"HS256","typ":"JWT"}'), _b64url('{"sub":"42","exp":1}')

    pem = "\n".join(r(ALNUM + "+/", 64) for _ in range(4))
    return {
        "anthropic": "sk-ant-api03-" + r(ALNUM + "-_", 93) + "AA",
        "openai": "sk-proj-" + r(ALNUM + "-_", 156),
        "github": "ghp_" + r(ALNUM, 36),
        "github-fine-grained": "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59),
        "gitlab": "glpat-" + r(ALNUM + "-_", 20),
        "slack": "xoxb-" + r(string.digits, 12) + "-" + r(string.digits, 13) + "-" + r(ALNUM, 24),
        "slack-app": "xapp-1-A" + r(string.ascii_uppercase + string.digits, 10) + "-" + r(HEX, 64),
        "aws-access-key-id": "AKIA" + r(string.ascii_uppercase + "234567", 16),
        "google-api-key": "AIza" + r(ALNUM + "-_", 35),
        "google-oauth-token": "ya29." + r(ALNUM + "-_", 120),
        "google-client-secret": "GOCSPX-" + r(ALNUM + "-_", 28),
        "stripe": "sk_live_" + r(ALNUM, 99),
        "stripe-webhook": "whsec_" + r(ALNUM, 32),
        "huggingface": "hf_" + r(string.ascii_letters, 34),
        "jwt": f"{header}.{claims}.{r(ALNUM + '-_', 43)}",
        "npm": "npm_" + r(ALNUM, 36),
        "pypi": "pypi-AgEIcHlwaS5vcmc" + r(ALNUM + "-_", 140),
        "groq": "gsk_" + r(ALNUM, 52),
        "xai": "xai-" + r(ALNUM, 80),
        "perplexity": "pplx-" + r(ALNUM, 48),
        "replicate": "r8_" + r(ALNUM, 37),
        "tavily": "tvly-dev-" + r(ALNUM, 32),
        "linear": "lin_api_" + r(ALNUM, 40),
        "notion": "ntn_" + r(ALNUM, 46),
        "sendgrid": "SG." + r(ALNUM + "-_", 22) + "." + r(ALNUM + "-_", 43),
        "digitalocean": "dop_v1_" + r(HEX, 64),
        "databricks": "dapi" + r(HEX, 32),
        "docker-hub": "dckr_pat_" + r(ALNUM + "-_", 27),
        "shopify": "shpat_" + r(HEX, 32),
        "atlassian": "ATATT3xFfGF0" + r(ALNUM + "-_", 180),
        "figma": "figd_" + r(ALNUM + "-_", 40),
        "hashicorp-vault": "hvs." + r(ALNUM + "-_", 90),
        "postman": "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34),
        "private-key": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----",
    }
