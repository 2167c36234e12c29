"""Money: the pay rule (``pay``): paid time, the amount owed at the hourly rate, the bonus base.

Every path that pays or shows pay calls it: the Prolific bonus, the reports, the statement.
Calls no other capability.
"""
