"""The protocol's vocabulary: what the models and the services both need, knowing no model.

Plain constants, choices and validators, importing Django's settings, validators and choices
classes but never a model, and nothing of ``annotation`` above this package:

- ``states``: a participation's states and exclusion kinds, the two phases, which phase each state
  works in;
- ``outcomes``: the ways a participation ends (the outcome kinds) and the check of a study's codes;
- ``survey``: the check of a survey definition;
- ``translations``: the check of a study's translations;
- ``languages``: the languages a study may be set to.

Imports run one way (tests/test_layers.py): tasks_app <- protocol <- models <- services <- reporting
<- entry points.
"""
