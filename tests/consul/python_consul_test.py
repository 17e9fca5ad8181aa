#!/usr/bin/python3
"""A Consul client that no one on this project wrote: Debian's python3-consul
(0.7.1) against cascade-agent's Consul-compatible API (docs/consul-compat.md).

Starts real processes on 127.0.0.1 only: an L2 hub with two L1 hubs, dc1 and
dc2 (--upstream), agents A, B and C in dc1 and agent D in dc2, each with
--http 127.0.0.1:0. Then, through python-consul only:
  1. A registers "web" with a TTL check: B sees it critical; A passes the
     check: a blocking query at B returns it passing; A fails it: B's
     passing list empties; a check not passed within its TTL turns critical.
  2. A blocking query at B for "pay" returns when a provider on C appears,
     and again when it disappears.
  3. The same across datacenters: a blocking query at B (dc1) returns when a
     provider on D (dc2) appears (Datacenter dc2, served through L2) and
     when it is deregistered.
  4. catalog.services, catalog.service, status.leader, status.peers,
     agent.self, agent.services, agent.checks; A deregisters "web".
  5. The KV store, cascade's config centre (GROUP/KEY): A puts and gets a
     value, lists the group (recurse), a blocking get at A returns after a
     put through B, A deletes; with cascadectl, a key set at the L2 hub is
     read through A in dc1. A --config-group that is not a group name stops
     cascade-agent with a message saying so.
Every wait is a blocking query or a poll with a deadline; hubs and agents
beat every 200 ms, so the whole run takes a few seconds.

Usage: python_consul_test.py PATH/TO/cascade-hub PATH/TO/cascade-agent [PATH/TO/cascadectl]
Exit codes: 0 passed, 1 failed, 77 skipped (no python3-consul here).
"""

import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'support'))
from cascade_processes import PATIENCE_S, Processes, check, eventually  # noqa: E402

SKIP = 77
for variable in ('CONSUL_HTTP_ADDR', 'CONSUL_HTTP_TOKEN', 'CONSUL_HTTP_SSL',
                 'CONSUL_HTTP_SSL_VERIFY'):
    os.environ.pop(variable, None)  # python-consul reads them: talk to our agents only
try:
    import consul
except ImportError:
    print('SKIP: /usr/bin/python3 cannot import consul (install python3-consul)')
    sys.exit(SKIP)

BEAT_MS = '200'
LEASE_MS = '600'
L2_LEASE_MS = '1200'  # L2 holds an L1 for three of its uplink's beats
BLOCK_WAIT = '30s'    # longer than any change takes: a blocking query that returns saw one


class Cluster(Processes):
    """The hubs and agents of one run."""

    def __init__(self, hub_binary, agent_binary, workdir):
        super().__init__(workdir)
        self.hub_binary = hub_binary
        self.agent_binary = agent_binary

    def hub(self, name, *extra):
        data = os.path.join(self.workdir, name + '-data')
        process = self.spawn(name, [self.hub_binary, '--id', name, '--listen', 'tcp://127.0.0.1:*',
                                    '--data', data, '--beat-interval-ms', BEAT_MS,
                                    '--probe-held', 'off', *extra])
        return self.line_of(process, os.path.join(data, 'hub.endpoint'), '')

    def agent(self, name, hub, zone):
        process = self.spawn(name, [self.agent_binary, '--hub', hub, '--id', name, '--zone', zone,
                                    '--beat-interval-ms', BEAT_MS, '--http', '127.0.0.1:0'])
        listening = self.output_line(name, process, 'http listening on ')
        host, port = listening.rsplit(':', 1)
        check(host == '127.0.0.1', f'{name} listens on {listening}')
        return consul.Consul(host='127.0.0.1', port=int(port))


def ids(nodes):
    return sorted(entry['Service']['ID'] for entry in nodes)


def wait_health(client, name, wanted, **query):
    """Blocking health queries until wanted(nodes) holds; the last (index, nodes)."""
    deadline = time.monotonic() + PATIENCE_S
    index, nodes = client.health.service(name, **query)
    while not wanted(nodes):
        check(time.monotonic() < deadline,
              f'health.service({name!r}, {query}) never became what was wanted: {nodes}')
        index, nodes = client.health.service(name, index=index, wait='5s', **query)
    return index, nodes


class Blocked:
    """Blocking queries on a thread of their own, started at once, from `index`
    until wanted(answer) holds: ask(index) is one query, (index, answer); a
    query that returns with nothing wanted (Consul allows such wakeups)
    blocks again with the index it got."""

    def __init__(self, ask, index, wanted):
        self.result = None
        self.queries = 0
        self.started = time.monotonic()
        self.thread = threading.Thread(target=self.run, args=(ask, index, wanted))
        self.thread.start()

    def run(self, ask, index, wanted):
        try:
            while True:
                self.queries += 1
                index, answer = ask(index)
                if wanted(answer) or time.monotonic() - self.started > PATIENCE_S:
                    break
            self.result = (index, answer)
        except Exception as e:  # reported by get()
            self.result = e
        self.elapsed = time.monotonic() - self.started

    def still_waiting_after(self, seconds):
        self.thread.join(seconds)
        return self.thread.is_alive()

    def get(self):
        self.thread.join(PATIENCE_S + 5)
        check(not self.thread.is_alive(), 'the blocking query never returned')
        if isinstance(self.result, Exception):
            raise self.result
        check(self.elapsed < PATIENCE_S, f'it returned only after {self.elapsed:.1f} s')
        return self.result


def blocked_health(client, name, index, wanted, **query):
    """Blocked on client.health.service(name, **query)."""
    return Blocked(lambda i: client.health.service(name, index=i, wait=BLOCK_WAIT, **query),
                   index, wanted)


def ttl_checks_change_health_at_another_agent(a, b):
    check(a.agent.service.register('web', service_id='web-1', address='127.0.0.1', port=8080,
                                   tags=['v1'], check=consul.Check.ttl('10s')),
          'register web-1 at A')
    index, nodes = wait_health(b, 'web', lambda n: ids(n) == ['web-1'])
    statuses = [c['Status'] for c in nodes[0]['Checks']]
    check(statuses == ['passing', 'critical'], f'a TTL check starts critical: {statuses}')
    _, passing = b.health.service('web', passing=True)
    check(passing == [], f'not passing before the first pass: {passing}')

    blocked = blocked_health(b, 'web', index, lambda n: n != [], passing=True)
    check(blocked.still_waiting_after(0.3), 'the blocking query returned before any change')
    check(a.agent.check.ttl_pass('service:web-1', notes='ready'), 'pass at A')
    index, nodes = blocked.get()
    check(ids(nodes) == ['web-1'], f'passing at B after the pass: {nodes}')
    entry = nodes[0]
    check(entry['Service']['Port'] == 8080 and entry['Service']['Address'] == '127.0.0.1',
          f'address: {entry["Service"]}')
    check(entry['Service']['Tags'] == ['v1'], f'tags: {entry["Service"]["Tags"]}')
    check(entry['Node']['Node'] == 'agent-a' and entry['Node']['Datacenter'] == 'dc1',
          f'node: {entry["Node"]}')
    print(f'  B saw the pass at A after {blocked.elapsed:.2f} s ({blocked.queries} queries)')

    check(a.agent.check.ttl_fail('service:web-1', notes='broken'), 'fail at A')
    wait_health(b, 'web', lambda n: n == [], passing=True)
    _, nodes = b.health.service('web')
    check(nodes[0]['Checks'][1]['Status'] == 'critical', f'critical at B: {nodes}')

    check(a.agent.check.ttl_warn('service:web-1'), 'warn at A')
    _, nodes = wait_health(b, 'web', lambda n: n and n[0]['Checks'][1]['Status'] == 'warning')
    check(b.health.service('web', passing=True)[1] == [], 'warning is not passing')

    # The application stops reporting: the TTL runs out at A, B sees critical.
    check(a.agent.service.register('tick', service_id='tick-1', address='127.0.0.1', port=9,
                                   check=consul.Check.ttl('1s')), 'register tick-1')
    check(a.agent.check.ttl_pass('service:tick-1'), 'pass tick-1')
    wait_health(b, 'tick', lambda n: ids(n) == ['tick-1'], passing=True)
    started = time.monotonic()
    wait_health(b, 'tick', lambda n: n == [], passing=True)
    expired_after = time.monotonic() - started
    check(a.agent.checks()['service:tick-1']['Output'] == 'TTL expired', 'TTL expired at A')
    print(f'  tick-1 turned critical at B {expired_after:.2f} s after its pass (TTL 1 s)')


def blocking_query_sees_a_provider_come_and_go(b, c):
    index, nodes = b.health.service('pay')
    check(nodes == [] and index == '1', f'an unknown service: 200 [] at index 1, got {index}')
    blocked = blocked_health(b, 'pay', index, lambda n: n != [])
    check(blocked.still_waiting_after(0.3), 'nothing to report yet')
    check(c.agent.service.register('pay', service_id='pay-c', address='127.0.0.1', port=7000),
          'register pay at C')
    index, nodes = blocked.get()
    check(ids(nodes) == ['pay-c'], f'pay-c appeared: {nodes}')
    print(f'  B saw pay-c appear after {blocked.elapsed:.2f} s ({blocked.queries} queries)')
    blocked = blocked_health(b, 'pay', index, lambda n: n == [])
    check(blocked.still_waiting_after(0.3), 'nothing changed yet')
    check(c.agent.service.deregister('pay-c'), 'deregister pay-c at C')
    index, nodes = blocked.get()
    check(nodes == [], f'pay-c disappeared: {nodes}')
    print(f'  B saw pay-c disappear after {blocked.elapsed:.2f} s ({blocked.queries} queries)')


def blocking_query_across_datacenters(b, d):
    index, nodes = b.health.service('geo')
    check(nodes == [], f'geo is unknown at first: {nodes}')
    blocked = blocked_health(b, 'geo', index, lambda n: n != [])
    check(d.agent.service.register('geo', service_id='geo-d', address='127.0.0.1', port=7100,
                                   tags=['eu']), 'register geo at D (dc2)')
    index, nodes = blocked.get()
    check(ids(nodes) == ['geo-d'], f'geo-d appeared in dc1: {nodes}')
    node = nodes[0]['Node']
    check(node['Datacenter'] == 'dc2' and node['Node'] == 'agent-d', f'node: {node}')
    check(node['Meta']['cascade-tier'] != '0', f'served through L2: {node}')
    print(f'  B (dc1) saw geo-d (dc2) appear after {blocked.elapsed:.2f} s, '
          f'({blocked.queries} queries), tier {node["Meta"]["cascade-tier"]}')
    check(ids(b.health.service('geo', dc='dc2')[1]) == ['geo-d'], '?dc=dc2 keeps it')
    check(b.health.service('geo', dc='dc1')[1] == [], '?dc=dc1 drops it')
    check(ids(b.health.service('geo', tag='eu')[1]) == ['geo-d'], '?tag=eu keeps it')

    blocked = blocked_health(b, 'geo', index, lambda n: n == [])
    check(d.agent.service.deregister('geo-d'), 'deregister geo-d at D')
    index, nodes = blocked.get()
    check(nodes == [], f'geo-d disappeared from dc1: {nodes}')
    print(f'  B (dc1) saw geo-d (dc2) disappear after {blocked.elapsed:.2f} s '
          f'({blocked.queries} queries)')


def catalog_status_and_agent_endpoints(a, b, dc1_hub):
    index, services = a.catalog.services()
    check(services.get('web') == ['v1'] and int(index) >= 1, f'catalog.services at A: {services}')
    _, entries = b.catalog.service('web')
    check(len(entries) == 1, f'catalog.service at B: {entries}')
    entry = entries[0]
    check((entry['ServiceID'], entry['ServiceName'], entry['ServiceAddress'], entry['ServicePort'],
           entry['ServiceTags'], entry['Node'], entry['Datacenter']) ==
          ('web-1', 'web', '127.0.0.1', 8080, ['v1'], 'agent-a', 'dc1'), f'flat entry: {entry}')
    hub_address = dc1_hub.split('://', 1)[1]
    check(a.status.leader() == hub_address, f'status.leader: {a.status.leader()}')
    check(a.status.peers() == [hub_address], f'status.peers: {a.status.peers()}')
    config = a.agent.self()['Config']
    check(config['Datacenter'] == 'dc1' and config['NodeName'] == 'agent-a', f'self: {config}')
    services = a.agent.services()
    check(services['web-1']['Service'] == 'web' and services['web-1']['Port'] == 8080,
          f'agent.services: {services}')
    check(a.agent.checks()['service:web-1']['Status'] == 'warning', 'agent.checks')

    check(a.agent.service.deregister('web-1'), 'deregister web-1 at A')
    check('web-1' not in a.agent.services(), 'gone from agent.services')
    wait_health(b, 'web', lambda n: n == [])
    check(not a.agent.check.ttl_pass('service:web-1'), 'its check went with it (404)')


def kv_store_is_the_config_centre(a, b, ctl, l2):
    check(a.kv.put('app/db/url', 'postgres://db'), 'kv.put at A')
    index, entry = a.kv.get('app/db/url')
    check(entry is not None and entry['Value'] == b'postgres://db', f'kv.get at A: {entry}')
    check(entry['Key'] == 'app/db/url' and entry['Flags'] == 0, f'the entry: {entry}')
    check(a.kv.put('app/db/pool', '5'), 'kv.put of a second key')

    def both_listed():
        listed = a.kv.get('app/', recurse=True)[1] or []
        return listed if len(listed) == 2 else None
    entries = eventually('both keys listed at A', both_listed)
    check(sorted((e['Key'], e['Value']) for e in entries) ==
          [('app/db/pool', b'5'), ('app/db/url', b'postgres://db')], f'recurse: {entries}')
    index, entry = a.kv.get('app/db/url')

    blocked = Blocked(lambda i: a.kv.get('app/db/url', index=i, wait=BLOCK_WAIT), index,
                      lambda e: e is not None and e['Value'] == b'postgres://db2')
    check(blocked.still_waiting_after(0.3), 'the blocking get returned before any change')
    check(b.kv.put('app/db/url', 'postgres://db2'), 'kv.put through B')
    _, entry = blocked.get()
    check(entry['Value'] == b'postgres://db2', f'A saw the put through B: {entry}')
    print(f'  A saw a KV put through B after {blocked.elapsed:.2f} s ({blocked.queries} queries)')

    check(a.kv.delete('app/db/pool'), 'kv.delete at A')
    eventually('the deleted key gone at A', lambda: a.kv.get('app/db/pool')[1] is None or None)
    check(a.kv.delete('app/', recurse=True), 'kv.delete recurse at A')
    eventually('the group empty at A', lambda: a.kv.get('app/', recurse=True)[1] is None or None)

    if ctl is None:
        print('  (no cascadectl given: the cross-tier KV read is not checked)')
        return
    done = subprocess.run([ctl, '--hub', l2, 'config', 'set', 'shared', 'region', 'eu-west'],
                          capture_output=True, text=True, timeout=PATIENCE_S)
    check(done.returncode == 0, f'cascadectl config set at L2: {done.stdout}{done.stderr}')
    index, entry = a.kv.get('shared/region')
    if entry is None:
        blocked = Blocked(lambda i: a.kv.get('shared/region', index=i, wait=BLOCK_WAIT), index,
                          lambda e: e is not None)
        _, entry = blocked.get()
    check(entry['Value'] == b'eu-west', f'the L2 key read through A in dc1: {entry}')
    print('  a key set at the L2 hub read through a dc1 agent\'s KV')


def a_bad_config_group_stops_the_agent(agent_binary, hub):
    done = subprocess.run([agent_binary, '--hub', hub, '--config-group', 'bad\tname'],
                          capture_output=True, text=True, timeout=PATIENCE_S)
    check(done.returncode != 0 and '--config-group' in done.stderr + done.stdout and
          'control character' in done.stderr + done.stdout,
          f'a bad --config-group: exit {done.returncode}: {done.stdout}{done.stderr}')


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    ctl = sys.argv[3] if len(sys.argv) == 4 else None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='cascade-py-consul-') as workdir:
        cluster = Cluster(sys.argv[1], sys.argv[2], workdir)
        try:
            l2 = cluster.hub('l2', '--tier', '2', '--lease-ms', L2_LEASE_MS)
            dc1 = cluster.hub('dc1', '--zone', 'dc1', '--upstream', l2, '--lease-ms', LEASE_MS)
            dc2 = cluster.hub('dc2', '--zone', 'dc2', '--upstream', l2, '--lease-ms', LEASE_MS)
            a = cluster.agent('agent-a', dc1, 'dc1')
            b = cluster.agent('agent-b', dc1, 'dc1')
            c = cluster.agent('agent-c', dc1, 'dc1')
            d = cluster.agent('agent-d', dc2, 'dc2')
            for step in (lambda: ttl_checks_change_health_at_another_agent(a, b),
                         lambda: blocking_query_sees_a_provider_come_and_go(b, c),
                         lambda: blocking_query_across_datacenters(b, d),
                         lambda: catalog_status_and_agent_endpoints(a, b, dc1),
                         lambda: kv_store_is_the_config_centre(a, b, ctl, l2),
                         lambda: a_bad_config_group_stops_the_agent(sys.argv[2], dc1)):
                step()
        except Exception as e:  # a Failure, or python-consul's or Python's own
            print(f'FAIL: {type(e).__name__}: {e}')
            cluster.stop()
            cluster.print_logs()
            return 1
        finally:
            cluster.stop()
    print(f'PASS: python-consul registered, checked, watched, listed and kept keys through '
          f'cascade in {time.monotonic() - started:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
