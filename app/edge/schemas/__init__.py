"""The request and response bodies of the JSON API, by domain; the website checks its forms
against the same models. Inputs carry length and range limits. Import from the module that
owns a model (``from app.edge.schemas.battles import BattleReportIn``)."""
