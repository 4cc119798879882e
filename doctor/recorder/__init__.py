"""Recording what a service's predictors really run (``paddle-doctor record -- CMD``, or
``PADDLE_DOCTOR_RECORD=1`` through the installed ``.pth``): the hook (:mod:`.hook`) in the service,
the record's types (:mod:`.document`), where it lives (:mod:`.location`), how it is written
(:mod:`.writer`) and how the doctor reads it back (:mod:`.reading`). Nothing here is imported unless
recording is switched on, or the doctor reads a record."""
