"""A campaign's study plan, frozen before its labels (`study`), and what the report says where the
analysis departs from it (`check`)."""
