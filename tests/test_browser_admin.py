"""In real headless Chromium: once signed in at /admin (HTTP Basic with the admin token),
the browser sends the token with every page, so the public pages show the admin's view
(``server.admin_auth``); a browser that never signed in sees the visitor's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from papersift.core.config import Config
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.test_admin_view import TOKEN
from tests.test_browser import browser  # noqa: F401  (the fixture)
from tests.web_helpers import serving

pytest_plugins = ["tests.web_fixtures"]

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

pytestmark = pytest.mark.slow  # left out by `make test-fast`


def test_signing_in_at_admin_shows_the_admin_view(
    browser: WebDriver,  # noqa: F811
    engine: SearchEngine,
    built_config: Config,
) -> None:
    config = replace(built_config, server=replace(built_config.server, admin_token=TOKEN))
    with serving(create_app(engine, config)) as url:

        def main() -> str:
            return str(browser.find_element(By.CSS_SELECTOR, "main").text)

        browser.get(url + "/institutions?q=MIT")
        assert "ROR registry" in main() and "papersift" not in main()
        host = url.removeprefix("http://")
        browser.get(f"http://admin:{TOKEN}@{host}/admin")  # as typed into the sign-in box
        browser.get(url + "/institutions")
        assert "papersift import-ror FILE" in main()
        # A page the browser kept from before (for a minute) shows the admin's view once
        # reloaded: it asks again, now with the token.
        browser.get(url + "/institutions?q=MIT")
        browser.refresh()
        assert "papersift import-ror FILE" in main()
