# The Prolific tests' fixtures (a stand-in server, the operations on, a study at 12.00/h), for the kill tests
# of the Prolific areas.
from tests.prolific.conftest import full, prolific_on, prolific_study, standin  # noqa: F401
