"""Drives the web console in headless Chromium against a running gateway
(`blegateway serve --simulate`): enters the API key, scans, opens and
connects the heart-rate strap, plots its Heart Rate Measurement
notifications, and checks that values are plotted and the browser logged no
errors. Prints what it saw as JSON; exits non-zero, saying why, on failure.

    python3 console_check.py URL --api-key KEY [--screenshot PATH]
"""
import argparse
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

STRAP = "C4:7C:8D:6A:3E:01"
# Generous: the machine running the tests may be loaded.
TIMEOUT = 60


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--api-key", default="")
    parser.add_argument("--screenshot")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    arguments = parser.parse_args()

    options = webdriver.ChromeOptions()
    options.binary_location = arguments.chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1400", "--no-first-run", "--disable-extensions"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=arguments.chromedriver), options=options)
    wait = WebDriverWait(driver, TIMEOUT)
    step = "loading the console"
    try:
        driver.get(arguments.url)
        wait.until(lambda d: d.find_element(By.ID, "gateway-status").text != "connecting…")
        # Before it has the key, the console's first call is refused: the
        # browser logs that 401 and nothing else.
        before_key = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
        unexpected = [entry for entry in before_key if "status of 401" not in entry["message"]]
        if unexpected:
            sys.exit(f"errors before the key was entered: {unexpected}")
        step = "entering the API key"
        key_field = driver.find_element(By.ID, "api-key")
        key_field.clear()
        key_field.send_keys(arguments.api_key)
        driver.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()
        wait.until(lambda d: "version" in d.find_element(By.ID, "gateway-status").text)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#adapters tbody tr"))

        step = "scanning for the strap"
        driver.find_element(By.ID, "scan-toggle").click()
        row = f'#scan tbody tr[data-address="{STRAP}"]'
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, row))
        # A device whose advertisements change draws an RSSI sparkline.
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#scan svg.spark polyline"))
        driver.find_element(By.CSS_SELECTOR, row + " button").click()

        step = "connecting the strap"
        wait.until(lambda d: not d.find_element(By.ID, "device-connect").get_attribute("disabled"))
        driver.find_element(By.ID, "device-connect").click()
        wait.until(lambda d: d.find_element(By.ID, "device-state").text == "connected")
        heart_rate = '#gatt li[data-uuid="2a37"]'
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, heart_rate))
        services = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#gatt summary")]

        step = "plotting heart-rate notifications"
        driver.find_element(By.CSS_SELECTOR, heart_rate + " button").click()
        wait.until(lambda d: d.find_element(By.ID, "value-notify").is_enabled())
        driver.find_element(By.ID, "value-notify").click()
        plot = driver.find_element(By.ID, "plot")
        wait.until(lambda d: int(plot.get_attribute("data-points") or 0) >= 5)
        points = int(plot.get_attribute("data-points"))
        last = float(plot.get_attribute("data-last-value"))
        caption = driver.find_element(By.ID, "plot-caption").text
        events = len(driver.find_elements(By.CSS_SELECTOR, "#events li"))
        if arguments.screenshot:
            driver.save_screenshot(arguments.screenshot)

        step = "reading the browser's log"
        errors = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
        message = driver.find_element(By.ID, "message")
        shown_error = message.text if message.is_displayed() else ""
        print(json.dumps({
            "points": points, "last_value": last, "caption": caption, "services": services,
            "events": events, "browser_errors": errors, "shown_error": shown_error,
        }))
    except TimeoutException:
        message = driver.find_element(By.ID, "message").text
        logs = driver.get_log("browser")
        sys.exit(f"timed out {step}; the console says {message!r}; browser log: {logs}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
