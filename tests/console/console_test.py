#!/usr/bin/python3
"""cascade-hub's web console (docs/console.md) in a real browser: Debian's
headless Chromium, driven through chromedriver by Debian's python3-selenium.

Starts real processes on 127.0.0.1 only: an L2 hub and an L1 hub with
--upstream to it, both with --http 127.0.0.1:0 and a token file, and one agent
beating to L1 that registers orders (two instances) and payments. Then, in
the browser, on L1's console unless said otherwise:
  1. / leads to /ui/; the services page lists orders and payments with counts.
  2. Two callers report an orders instance failing (cascadectl report-failure):
     the isolated page shows it.
  3. The service page shows both instances; an operator takes one out of
     service: a wrong token is refused with the API's 401 text (and
     forgotten), the right one is asked for again and the instance is served
     OUT_OF_SERVICE, which `cascadectl resolve orders` shows too.
  4. The routing rules editor saves a rule after the API's dry run, and shows
     the dry run's parse error inline for a bad one.
  5. The topology page shows both tiers: L1 below its upstream L2, and L2's
     console shows L1 as its child.
  6. The switches page turns the notify switch on with a share.
  7. The audit page shows the operator's commands under the token's name.
Every page is loaded with no error in the browser's console (SEVERE entries
of its log), but for the failed requests a step provokes on purpose.

Usage: console_test.py HUB AGENT CASCADECTL CHROMIUM CHROMEDRIVER [--screenshots DIR]
  --screenshots DIR  also save DIR/console-{services,service,topology,isolated,
                     switches,audit}.png (the pictures of README.md and docs/console.md)
Exit codes: 0 passed, 1 failed, 77 skipped (no Chromium, chromedriver or selenium here).
"""

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'support'))
from cascade_processes import PATIENCE_S, Processes, check, eventually  # noqa: E402

SKIP = 77
BEAT_MS = '200'
LEASE_MS = '600'
L2_LEASE_MS = '1200'  # L2 holds L1 for three of its uplink's beats
ORDERS_1 = '127.0.0.1:9101'
ORDERS_2 = '127.0.0.1:9102'
PAYMENTS = '127.0.0.1:9201'
CHROMIUM_FLAGS = ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic',
                  '--no-first-run', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--window-size=1440,1000')


class Cluster(Processes):
    """The hubs and the agent of one run, with the operator's token."""

    def __init__(self, args, workdir):
        super().__init__(workdir)
        self.args = args
        self.token = secrets.token_urlsafe(24)
        self.token_file = os.path.join(workdir, 'http-tokens')
        with open(os.open(self.token_file, os.O_WRONLY | os.O_CREAT, 0o600), 'w') as f:
            f.write(f'operator {self.token}\n')

    def hub(self, name, *extra):
        """Starts a hub; (its ZeroMQ endpoint, the base URL of its --http)."""
        data = os.path.join(self.workdir, name + '-data')
        process = self.spawn(name, [self.args.hub, '--id', name, '--listen', 'tcp://127.0.0.1:*',
                                    '--data', data, '--beat-interval-ms', BEAT_MS,
                                    '--probe-held', 'off', '--http', '127.0.0.1:0',
                                    '--http-token-file', self.token_file, *extra])
        endpoint = self.line_of(process, os.path.join(data, 'hub.endpoint'), '')
        http = self.output_line(name, process, 'http listening on ')
        return endpoint, 'http://' + http

    def agent(self, name, hub, *registrations):
        argv = [self.args.agent, '--hub', hub, '--id', name, '--zone', 'dc1',
                '--beat-interval-ms', BEAT_MS]
        for registration in registrations:
            argv += ['--register', registration]
        self.spawn(name, argv)

    def ctl(self, hub, *argv):
        done = subprocess.run([self.args.cascadectl, '--hub', hub, *argv], capture_output=True,
                              text=True, timeout=PATIENCE_S)
        return done.returncode, done.stdout + done.stderr


def get_json(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


class Browser:
    """Headless Chromium through chromedriver; console() says what its log holds."""

    def __init__(self, args, workdir):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument('--user-data-dir=' + os.path.join(workdir, 'chromium-profile'))
        options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        service = Service(args.chromedriver, log_path=os.path.join(workdir, 'chromedriver.log'))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(PATIENCE_S)

    def quit(self):
        self.driver.quit()

    def open(self, url):
        self.driver.get(url)

    def find(self, css, what=None):
        from selenium.webdriver.common.by import By
        return eventually(what or css, lambda: self.driver.find_element(By.CSS_SELECTOR, css))

    def text_of(self, css):
        from selenium.webdriver.common.by import By
        return ' '.join(e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css))

    def wait_text(self, css, wanted, what):
        """Until the text of the elements matching `css` holds each of `wanted`."""
        return eventually(what, lambda: all(w in self.text_of(css) for w in wanted))

    def errors(self, expected=()):
        """The SEVERE entries of the browser's log since the last call: (those
        matching none of the `expected` patterns, how many matched one)."""
        severe = [e['message'] for e in self.driver.get_log('browser') if e['level'] == 'SEVERE']
        provoked = [m for m in severe if any(re.search(p, m) for p in expected)]
        return [m for m in severe if m not in provoked], len(provoked)

    def check_no_errors(self, page, expected=()):
        """No error in the console since the last check but the `expected`
        ones, which must be there (so the log is known to be read)."""
        errors, provoked = self.errors(expected)
        check(not errors, f'{page}: errors in the browser console: {errors}')
        check(provoked or not expected, f'{page}: the console has none of {expected}')

    def screenshot(self, directory, name):
        """DIR/console-NAME.png: the whole page, 1440 pixels wide, without scroll bars."""
        if not directory:
            return
        def emulate(height):
            self.driver.execute_cdp_cmd('Emulation.setDeviceMetricsOverride', {
                'width': 1440, 'height': height, 'deviceScaleFactor': 1, 'mobile': False})
        emulate(800)
        height = self.driver.execute_script('return document.documentElement.scrollHeight')
        emulate(max(600, height))
        self.driver.save_screenshot(os.path.join(directory, f'console-{name}.png'))
        self.driver.execute_cdp_cmd('Emulation.clearDeviceMetricsOverride', {})


def services_page(browser, l1_ui, shots):
    browser.open(l1_ui.replace('/ui/', '/'))
    eventually('/ leads to /ui/#/services',
               lambda: browser.driver.current_url == l1_ui + '#/services')
    browser.find('table.services a[href="#/service/orders/default"]', 'orders on the services page')
    browser.wait_text('table.services tbody', ['orders', 'payments'], 'both services listed')
    row = browser.find('table.services tr[data-key="orders\\a default"]')
    eventually('orders counts its two instances up',
               lambda: [c.text for c in row.find_elements('css selector', 'td')][2:4] == ['2', '2'])
    browser.wait_text('#hub-identity', ['l1', 'tier 1', 'zone dc1'], 'the hub in the header')
    browser.check_no_errors('services page')
    browser.screenshot(shots, 'services')
    print('  services page: orders and payments with their counts')


def isolated_page(browser, cluster, l1, l1_ui, shots):
    for reporter in ('checkout-1', 'checkout-2'):
        code, out = cluster.ctl(l1, 'report-failure', 'orders', ORDERS_2, '--kind', 'timeout',
                                '--reporter', reporter, '--count', '3')
        check(code == 0, f'report-failure from {reporter}: {out}')
    browser.open(l1_ui + '#/isolated')
    browser.wait_text('table.isolated tbody', ['orders', ORDERS_2, 'isolated'],
                      'the isolated instance on the isolated page')
    browser.find('table.isolated button[data-action="readmit"]')
    browser.check_no_errors('isolated page')
    browser.screenshot(shots, 'isolated')
    print(f'  isolated page: {ORDERS_2} isolated after two callers reported it')


def take_out_of_service(browser, cluster, l1, l1_ui):
    browser.open(l1_ui + '#/service/orders/default')
    row_css = f'table.instances tr[data-key="{ORDERS_1}"]'
    browser.wait_text(row_css, [ORDERS_1, 'UP', 'ok', 'agent-a'], 'the instance on its page')
    browser.wait_text(f'table.instances tr[data-key="{ORDERS_2}"]', ['isolated'],
                      'the isolated instance shown as such')
    browser.check_no_errors('service page')

    # A wrong token: the API's 401 is shown, and the token forgotten.
    browser.find(f'{row_css} button[data-action="out-of-service"]').click()
    browser.find('#token-dialog[open] #token-input').send_keys('not-the-operators-token')
    browser.find('#token-use').click()
    browser.wait_text('#action-result.error', ['401', 'unauthorized'], 'the API\'s 401 shown')
    browser.check_no_errors('a wrong token', expected=[r'status of 401'])

    browser.find(f'{row_css} button[data-action="out-of-service"]').click()
    browser.find('#token-dialog[open] #token-input').send_keys(cluster.token)
    browser.find('#token-use').click()
    browser.wait_text('#action-result.ok', ['OUT_OF_SERVICE'], 'the hub\'s answer shown')
    browser.find(f'{row_css}[data-status="OUT_OF_SERVICE"]', 'the row refreshed')
    check(browser.find(f'{row_css} button[data-action="in-service"]').is_enabled(),
          'the instance can be put back in service')
    browser.check_no_errors('out of service')

    code, out = cluster.ctl(l1, 'resolve', 'orders')
    lines = [line for line in out.splitlines() if line.startswith(ORDERS_1)]
    check(code == 0 and len(lines) == 1 and 'OUT_OF_SERVICE' in lines[0],
          f'cascadectl resolve orders shows it out of service: {out}')
    print(f'  service page: a wrong token refused (401), then {ORDERS_1} taken out of service; '
          f'cascadectl: {" ".join(lines[0].split())}')


def edit_routes(browser, cluster, l1, shots):
    editor = browser.find('#routes-text')
    editor.clear()
    editor.send_keys('10:zone = dc1 => zone = dc1')
    browser.find('button[data-action="save-routes"]').click()
    browser.wait_text('#action-result.ok', ['1 routing rule set'], 'the rule saved')
    browser.wait_text('table.rules tbody', ['zone = dc1 => zone = dc1'], 'the saved rule listed')
    code, out = cluster.ctl(l1, 'resolve', 'orders')
    check('zone = dc1 => zone = dc1' in out, f'cascadectl shows the rule: {out}')

    editor.send_keys('\nzone == dc2 => zone = dc2')
    browser.find('button[data-action="check-routes"]').click()
    browser.wait_text('.rule-error', ['column 7', 'unexpected', 'Rule 2'],
                      'the dry run\'s parse error inline')
    check(browser.text_of('.rule-error pre').endswith('      ^'), 'the caret under column 7')
    check('Edited, not saved' in browser.text_of('#routes-state'), 'the editor says it is edited')
    time.sleep(2.5)  # a refresh in between keeps the operator's text
    check(browser.find('#routes-text').get_attribute('value').endswith('zone == dc2 => zone = dc2'),
          'a refresh left the editor\'s text alone')
    browser.check_no_errors('routing rules', expected=[r'status of 400'])
    browser.screenshot(shots, 'service')
    print('  routing rules: one saved after its dry run; a bad one refused inline at column 7')


def topology_pages(browser, l1_ui, l2_ui, shots):
    browser.open(l1_ui + '#/topology')
    browser.wait_text('.tree .node.self', ['l1', 'tier 1', 'this hub'], 'L1 as this hub')
    browser.wait_text('.tree .node.upstream', ['l2', 'current', 'reachable'],
                      'L2 as its reachable upstream')
    check(browser.find('.tree .upstream-level .node.self'), 'L1 below its upstream in the tree')
    browser.wait_text('.tree .leaf', ['1 agent'], 'its agent')
    browser.check_no_errors('topology page')
    browser.screenshot(shots, 'topology')

    browser.open(l2_ui + '#/topology')
    browser.wait_text('.tree .node.self', ['l2', 'tier 2'], 'L2 as this hub on its console')
    browser.wait_text('.tree .node.child', ['l1', 'tier 1'], 'L1 as L2\'s child')
    browser.check_no_errors('L2\'s topology page')
    print('  topology: L1 below its upstream L2 on L1\'s console, L1 as L2\'s child on L2\'s')


def switches_page(browser, l1_ui, shots):
    browser.open(l1_ui + '#/switches')
    browser.wait_text('#protection-title', ['on'], 'eviction protection on')
    browser.wait_text('#notify-title', ['off'], 'the notify switch off')
    share = browser.find('#notify-share')
    share.clear()
    share.send_keys('25')
    browser.find('button[data-action="notify-on"]').click()  # the token is kept: no dialog
    browser.wait_text('#action-result.ok', ['notify switch on', '25%'], 'the switch turned on')
    browser.wait_text('#notify-title', ['on, 25% per push'], 'the switch shown on')
    browser.check_no_errors('switches page')
    browser.screenshot(shots, 'switches')
    print('  switches: the notify switch turned on at 25% without asking for the token again')


def config_pages(browser, cluster, l1, l1_ui, shots):
    code, out = cluster.ctl(l1, 'config', 'set', 'orders.limits', 'timeout_ms', '300')
    check(code == 0, f'cascadectl config set: {out}')
    browser.open(l1_ui + '#/config')
    browser.wait_text('table.config tbody', ['orders.limits'], 'the group listed')
    browser.find('table.config a[href="#/config/orders.limits"]').click()
    browser.wait_text('table.config-values tbody', ['timeout_ms', '300', 'l1'],
                      'the value with the hub that set it')
    browser.find('#config-key').send_keys('retries')
    browser.find('#config-value').send_keys('2')
    browser.find('button[data-action="config-set"]').click()
    browser.wait_text('#action-result.ok', ['set retries'], 'the hub\'s answer shown')
    browser.wait_text('table.config-values tbody', ['retries'], 'the new key listed')
    code, out = cluster.ctl(l1, 'config', 'get', 'orders.limits', 'retries')
    check(code == 0 and out.strip() == '2', f'cascadectl sees the console\'s key: {code} {out}')
    browser.wait_text('table.config-history tbody', ['http:operator', 'retries'],
                      'the change in the history, by its author')
    rows = browser.driver.find_elements('css selector', 'table.config-history tbody tr')
    check(len(rows) == 2, f'two changes in the history: {len(rows)}')
    rows[-1].find_element('css selector', 'button[data-action="config-rollback"]').click()
    browser.wait_text('#action-result.ok', ['rolled back'], 'the rollback done')
    eventually('retries gone after the rollback',
               lambda: cluster.ctl(l1, 'config', 'get', 'orders.limits', 'retries')[0] == 1)
    browser.check_no_errors('config pages')
    browser.screenshot(shots, 'config')
    print('  config: a key set by cascadectl and one from the console, then rolled back')


def audit_page(browser, cluster, l1, l1_ui, shots):
    browser.open(l1_ui + '#/audit')
    browser.wait_text('table.audit tbody', ['mark_out_of_service', 'set_routes', 'notify_switch',
                                            'config_edit', 'config_rollback',
                                            'http:operator', 'done'], 'the commands audited')
    older = browser.find('button[data-action="audit-older"]')
    check(not older.is_enabled(), 'a single page: nothing older')
    browser.check_no_errors('audit page')
    browser.screenshot(shots, 'audit')

    # Twelve more records from cascadectl: pages of 10 then hold 10 and 8.
    for _ in range(12):
        code, out = cluster.ctl(l1, 'eviction-protection', 'on', '--actor', 'ops@console-test')
        check(code == 0, f'cascadectl eviction-protection on: {out}')
    from selenium.webdriver.support.ui import Select
    Select(browser.find('#audit-limit')).select_by_value('10')
    eventually('ten records on the first page, the newest first', lambda: [
        r.get_attribute('data-key') for r in browser.driver.find_elements(
            'css selector', 'table.audit tbody tr')] == [str(n) for n in range(18, 8, -1)])
    eventually('older pages', older.is_enabled)
    older.click()
    eventually('the eight oldest on the second page', lambda: [
        r.get_attribute('data-key') for r in browser.driver.find_elements(
            'css selector', 'table.audit tbody tr')] == [str(n) for n in range(8, 0, -1)])
    browser.wait_text('.page-label', ['page 2'], 'the page number')
    check(not older.is_enabled(), 'nothing older than the second page')
    browser.find('button[data-action="audit-newer"]').click()
    browser.wait_text('table.audit tbody', ['ops@console-test'], 'back on the first page')
    browser.check_no_errors('audit pages')
    print('  audit: the operator\'s commands under http:operator, in pages of 10')


def run(args, workdir):
    cluster = Cluster(args, workdir)
    browser = None
    try:
        l2, l2_http = cluster.hub('l2', '--tier', '2', '--zone', 'eu', '--lease-ms', L2_LEASE_MS)
        l1, l1_http = cluster.hub('l1', '--zone', 'dc1', '--upstream', l2, '--lease-ms', LEASE_MS,
                                  '--isolation-max-share', '1', '--isolation-base-ms', '120000')
        cluster.agent('agent-a', l1, f'orders={ORDERS_1}', f'orders={ORDERS_2}',
                      f'payments={PAYMENTS}')
        eventually('the agent\'s instances at L1', lambda: len(
            get_json(l1_http + '/api/v1/services/orders')['instances']) == 2)
        eventually('L1\'s upstream L2 answering', lambda: any(
            u['hub_id'] == 'l2' and u['reachable']
            for u in get_json(l1_http + '/api/v1/topology')['upstreams']))

        browser = Browser(args, workdir)
        l1_ui, l2_ui = l1_http + '/ui/', l2_http + '/ui/'
        services_page(browser, l1_ui, args.screenshots)
        isolated_page(browser, cluster, l1, l1_ui, args.screenshots)
        take_out_of_service(browser, cluster, l1, l1_ui)
        edit_routes(browser, cluster, l1, args.screenshots)
        topology_pages(browser, l1_ui, l2_ui, args.screenshots)
        switches_page(browser, l1_ui, args.screenshots)
        config_pages(browser, cluster, l1, l1_ui, args.screenshots)
        audit_page(browser, cluster, l1, l1_ui, args.screenshots)
        return True
    except Exception as e:  # a Failure, or selenium's or Python's own
        print(f'FAIL: {type(e).__name__}: {e}')
        if browser:
            try:
                print(f'  at {browser.driver.current_url}; browser log: {browser.errors()[0]}')
            except Exception:
                pass
        cluster.stop()
        cluster.print_logs()
        return False
    finally:
        if browser:
            browser.quit()
        cluster.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    for name in ('hub', 'agent', 'cascadectl', 'chromium', 'chromedriver'):
        parser.add_argument(name)
    parser.add_argument('--screenshots', metavar='DIR')
    args = parser.parse_args()
    try:
        import selenium  # noqa: F401 (Debian's python3-selenium)
    except ImportError:
        print('SKIP: /usr/bin/python3 cannot import selenium (install python3-selenium)')
        return SKIP
    for what, path in (('Chromium', args.chromium), ('chromedriver', args.chromedriver)):
        if not path or not os.access(path, os.X_OK):
            print(f'SKIP: no {what} at "{path}" (install chromium and chromium-driver)')
            return SKIP
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='cascade-console-') as workdir:
        if not run(args, workdir):
            return 1
    print(f'PASS: the web console showed, changed and audited the hubs\' state in Chromium '
          f'in {time.monotonic() - started:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
