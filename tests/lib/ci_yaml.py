#!/usr/bin/env python3
"""The YAML of doc/ci.md's CI jobs, for tests/t_ci_recipes.sh.

    ci_yaml.py DIR

DIR holds what the test extracted from doc/ci.md: github.yaml and
gitlab.yaml (the blocks marked ci-recipe), and CI.STEP.sh for each block
marked ci-step. Checks that each YAML parses, that its job runs exactly the
ci-step blocks, in order, under the conditions the test assumes when it runs
them (GitHub: the credentials step before publish), that only the state is
cached, and that no credentials are written in the YAML. Prints "ok - ..." and
"not ok - ..." lines (tests/lib/common.sh); exit 3 when the yaml module is
missing (python3-yaml).
"""
import os
import sys

try:
    import yaml
except ImportError:
    sys.exit(3)

STATE = ".lidiagen-state"
GITHUB_STEPS = ["install", "build", "publish", "failed"]
GITLAB_STEPS = ["install", "build", "publish"]
VARIABLES = ["LIDIAGEN_GIT", "LIDIAGEN_REF", "LIDIA_BUCKET"]
SECRETS = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]
CREDENTIALS_ACTION = "aws-actions/configure-aws-credentials@"


def report(what, problems):
    if problems:
        print("not ok - " + what)
        for p in problems:
            print("# " + p)
    else:
        print("ok - " + what)


def block(d, ci, step):
    with open(os.path.join(d, "%s.%s.sh" % (ci, step))) as f:
        return f.read()


def load(d, ci):
    with open(os.path.join(d, ci + ".yaml")) as f:
        text = f.read()
    try:
        return yaml.safe_load(text), None
    except yaml.YAMLError as e:
        return None, str(e)


def secrets_set(*envs):
    """The credential variables that an env or variables block sets."""
    return ["%s is set in the YAML" % k for e in envs for k in (e or {}) if k in SECRETS]


def not_cached_output(paths):
    return [p for p in paths if str(p).rstrip("/") in ("out", "manifest.jsonl")
            or str(p).startswith("out/")]


def check_github(d):
    doc, err = load(d, "github")
    report("github: the workflow's YAML parses", [err] if err else [])
    if err:
        return
    p = []
    jobs = doc.get("jobs") or {}
    if len(jobs) != 1:
        report("github: one job", ["jobs: %r" % list(jobs)])
        return
    job = next(iter(jobs.values()))
    steps = job.get("steps") or []
    env = dict(doc.get("env") or {}, **(job.get("env") or {}))
    p += ["%s is not set in env" % v for v in VARIABLES if v not in env]
    runs = [s for s in steps if "run" in s]
    if len(runs) != len(GITHUB_STEPS):
        p.append("%d run steps, not %d" % (len(runs), len(GITHUB_STEPS)))
    for s, name in zip(runs, GITHUB_STEPS):
        if s["run"] != block(d, "github", name):
            p.append("step %r runs something else than the 'github %s' block" %
                     (s.get("name"), name))
    report("github: its steps run the ci-step blocks, in order", p)

    p = []
    index = {id(s): i for i, s in enumerate(steps)}
    byname = dict(zip(GITHUB_STEPS, runs))
    pub = byname.get("publish", {})
    if pub.get("id") != "publish":
        p.append("the publish step's id is %r, not 'publish'" % pub.get("id"))
    failed = byname.get("failed", {})
    cond = str(failed.get("if", "")).replace('"', "'").replace(" ", "")
    if cond != "steps.publish.outputs.status=='1'":
        p.append("the failed-inputs step runs if %r" % failed.get("if"))
    for name in GITHUB_STEPS[:-1]:
        if "if" in byname.get(name, {}):
            p.append("step %r has a condition: the test runs it on success" % name)
    report("github: publish has id publish, only the failed-inputs step has a condition", p)

    p = []
    pi = index.get(id(pub), -1)
    creds = [i for i, s in enumerate(steps)
             if str(s.get("uses", "")).startswith(CREDENTIALS_ACTION)]
    if len(creds) != 1:
        p.append("%d %s steps, not 1" % (len(creds), CREDENTIALS_ACTION.rstrip("@")))
    elif not creds[0] < pi:
        p.append("the credentials step comes after publish")
    elif any(index.get(id(byname.get(n)), -1) > creds[0] for n in ("install", "build")):
        p.append("the credentials step comes before install or build: the test "
                 "gives the credentials to publish and the steps after it only")
    p += secrets_set(doc.get("env"), job.get("env"), *(s.get("env") for s in steps))
    report("github: configure-aws-credentials runs once, after build and before publish; "
           "no credentials in the YAML", p)

    p = []
    uses = [(i, s) for i, s in enumerate(steps) if "uses" in s]
    restore = [(i, s) for i, s in uses if s["uses"].startswith("actions/cache/restore@")]
    save = [(i, s) for i, s in uses if s["uses"].startswith("actions/cache/save@")]
    plain = [(i, s) for i, s in uses if s["uses"].startswith("actions/cache@")]
    if len(restore) != 1 or len(save) != 1 or plain:
        p.append("not one actions/cache/restore and one actions/cache/save")
    else:
        (ri, r), (si, s) = restore[0], save[0]
        rw, sw = r.get("with") or {}, s.get("with") or {}
        if not ri < pi < si:
            p.append("the state is not restored before publish and saved after it")
        for w in (rw, sw):
            if str(w.get("path", "")).strip() != STATE:
                p.append("a cache step's path is %r, not %s" % (w.get("path"), STATE))
            if "${{ github.sha }}" not in str(w.get("key", "")):
                p.append("a cache key %r does not name the commit" % w.get("key"))
        if rw.get("key") != sw.get("key"):
            p.append("restore and save keys differ")
        rk = str(rw.get("restore-keys", "")).split()
        if not rk or not all(str(rw.get("key", "")).startswith(k) for k in rk):
            p.append("restore-keys %r are not prefixes of the key" % rw.get("restore-keys"))
        if "if" in s:
            p.append("the save step has a condition (%r)" % s["if"])
    paths = [str((s.get("with") or {}).get("path", "")) for _, s in restore + save + plain]
    p += ["%r is cached" % x for x in not_cached_output(paths)]
    report("github: only %s is cached, keyed on the commit with restore-keys" % STATE, p)


def check_gitlab(d):
    doc, err = load(d, "gitlab")
    report("gitlab: .gitlab-ci.yml parses", [err] if err else [])
    if err:
        return
    jobs = {k: v for k, v in doc.items() if not k.startswith(".") and isinstance(v, dict)
            and "script" in v}
    if len(jobs) != 1:
        report("gitlab: one job", ["jobs: %r" % list(jobs)])
        return
    job = next(iter(jobs.values()))
    p = []
    script = job.get("script") or []
    want = [block(d, "gitlab", s) for s in GITLAB_STEPS]
    if script != want:
        p.append("script: %d items, not the %d ci-step blocks in order" % (len(script), len(want)))
    if job.get("before_script") or job.get("after_script"):
        p.append("before_script or after_script: the test does not run them")
    variables = dict(doc.get("variables") or {}, **(job.get("variables") or {}))
    p += ["%s is not set in variables" % v for v in VARIABLES if v not in variables]
    report("gitlab: its script runs the ci-step blocks, in order", p)

    p = secrets_set(doc.get("variables"), job.get("variables"))
    report("gitlab: no credentials in the YAML (they are CI/CD variables)", p)

    p = []
    cache = job.get("cache") or {}
    if not cache.get("key"):
        p.append("the cache has no key")
    if cache.get("paths") != [STATE]:
        p.append("the cache holds %r" % cache.get("paths"))
    if cache.get("when") != "always":
        p.append("the cache is saved when %r, not always" % cache.get("when"))
    arts = (job.get("artifacts") or {}).get("paths") or []
    p += ["%r is an artifact" % x for x in arts if str(x).rstrip("/") == "out"
          or str(x).startswith("out/")]
    report("gitlab: only %s is cached, with a key, saved always" % STATE, p)


def main():
    d = sys.argv[1]
    check_github(d)
    check_gitlab(d)


if __name__ == "__main__":
    main()
