"""Labelled example sentences: what a turn does (intent), what task it is about (goal) and
which attribute a free choice names (slot). Classified by the nearest example with the
embedder (``embedding.prototypes``): a paraphrase lands near its label without a rule.

These are examples of kinds of talk (orders, trips, bookings, claims, searches,
schedules), not a list of accepted phrasings: anything the embedder puts near them counts.
"""

from __future__ import annotations

STATE, ASK, CHANGE, CANCEL, FORGET, CONFIRM = (
    "state",
    "ask",
    "change",
    "cancel",
    "forget",
    "confirm",
)
INTENTS = (STATE, ASK, CHANGE, CANCEL, FORGET, CONFIRM)
SMALL_TALK = "small talk"
"""Classified with the intents but not one of them: a turn nearer a small-talk example than
to every intent's still gets its nearest intent (the graph reads every turn alike) and is
flagged ``TurnFacts.small_talk``, which keeps its unsure changes from a reviewer."""

INTENT_EXAMPLES: dict[str, tuple[str, ...]] = {
    STATE: (
        "I need a hotel in Lisbon for three nights",
        "my budget is 200 euros",
        "we are four people",
        "I ordered a laptop last week",
        "I'd like a table by the window",
        "the flight leaves at 9am",
    ),
    ASK: (
        "what is my hotel limit?",
        "where is my package?",
        "can you check the status of my order",
        "when does my flight leave?",
        "how much did I say I could spend?",
        "find me a cheap restaurant nearby",
    ),
    CHANGE: (
        "actually, make it 250 instead",
        "never mind, change it to express shipping",
        "let's switch to the later train",
        "on second thought, go with the blue one",
        "update the party size to six",
        "no wait, I meant Tuesday",
        "please change the date to a later day",
        "can you move the appointment to the afternoon",
        "make it earlier, our plans changed",
    ),
    CANCEL: (
        "cancel my order",
        "please cancel the booking",
        "I don't want the hotel anymore",
        "call off the reservation",
        "stop the subscription",
    ),
    FORGET: (
        "forget what I just said",
        "forget what I said about the hotel",
        "scratch that",
        "disregard my last message",
        "delete what I told you about my salary",
        "forget the extra bed",
        "never mind the parking request, forget it",
        "drop the breakfast thing, forget I asked",
    ),
    CONFIRM: (
        "yes, that's right",
        "sounds good, go ahead",
        "ok, book it",
        "perfect, confirm it",
        "sure, do that",
        "yes please",
        "grab it",
        "go for it",
        "fine",
        "that works for me",
        "deal, take it",
    ),
    SMALL_TALK: (
        "thanks so much!",
        "thank you, that's really kind of you",
        "I really appreciate your help",
        "got it, thanks for letting me know",
        "hi, how are you doing?",
        "good morning! how was your weekend?",
        "long time no see! what's new with you?",
        "talk to you later, bye!",
        "have a nice evening",
        "I'll let you know later",
        "no worries, take your time",
        "congratulations, that's great news!",
        "that sounds lovely, I'm so happy for you",
        "what a beautiful picture!",
        "haha, that's hilarious",
        "I'm feeling a bit tired today",
        "we had such a fun time at the park with the kids",
    ),
}

OTHER = "other"
PEOPLE_EXAMPLES: dict[str, tuple[str, ...]] = {
    "person": ("colleague", "wife", "friend", "boss", "brother", "neighbour", "manager",
               "roommate", "partner", "customer"),
    "thing": ("hotel", "room", "flight", "plan", "order", "price", "car", "ticket", "budget",
              "package", "company", "policy", "phone"),
}  # fmt: skip
"""Is the subject of a clause someone else (their value is not the user's) or a thing?"""
COMMAND_EXAMPLES: dict[str, tuple[str, ...]] = {
    FORGET: ("forget", "disregard", "ignore", "scratch", "never mind", "delete"),
    CANCEL: ("cancel", "remove", "drop", "call off", "take off", "stop"),
    OTHER: ("keep", "book", "remember", "add", "make", "choose", "send", "change", "get",
            "want", "need", "find", "check", "use", "go with", "hold", "pay", "move"),
}  # fmt: skip
"""The action of an imperative verb ("forget the pool", "take the add-on off"), classified
by the verb alone: a longer turn's other words would outweigh it."""

GOAL_EXAMPLES: dict[str, tuple[str, ...]] = {
    "track delivery": (
        "where is my package?",
        "check where my order is",
        "has my parcel shipped yet",
        "track my delivery",
    ),
    "change order": ("change the delivery address of my order", "make my order express shipping"),
    "return item": ("I want to return the shoes", "how do I send this back for a refund"),
    "book hotel": ("book a hotel room", "I need a place to stay for three nights"),
    "book flight": ("book me a flight to Rome", "find a flight to Berlin next week"),
    "book train": ("get me a train ticket to Paris", "which train should I take to Lyon"),
    "book table": ("reserve a table for dinner", "book a restaurant for four tonight"),
    "rent home": ("I'm looking for an apartment to rent", "find a flat under 1200 a month"),
    "file claim": (
        "I want to file an insurance claim",
        "my luggage was damaged, I want compensation",
    ),
    "schedule meeting": ("schedule a meeting with my team", "set up a call on Thursday"),
    "buy product": ("I want to buy a new phone", "order a laptop for me"),
    "file support ticket": (
        "my internet keeps dropping",
        "the app crashes, please fix it",
        "my device stopped working and it is under warranty",
        "I can't log in to my account",
        "I want to report a bug",
    ),
    "change subscription": ("change my phone plan", "cancel the streaming add-on"),
    "rent car": ("rent a car for the weekend", "I need a van to move house"),
    "buy tickets": ("get two tickets for the concert", "book seats for the match"),
    "book appointment": ("book a repair visit", "when can the technician come"),
    "search": ("search for running shoes", "look up cheap flights", "find me a dentist nearby"),
    "plan trip": ("plan a weekend trip to the coast", "organise our holiday in Japan"),
}
"""Tasks people bring to an assistant, each a goal node's label."""

SLOT_EXAMPLES: dict[str, tuple[str, ...]] = {
    "delivery method": (
        "ship it with DHL",
        "send it by express courier",
        "deliver by standard post",
        "use courier cash on delivery",
        "home delivery please",
        "I'll pick it up in the store",
    ),
    "payment method": (
        "pay by credit card",
        "pay with PayPal",
        "pay by bank transfer",
        "pay in advance online",
        "pay at the counter",
    ),
    "payout account": (
        "pay the refund into my bank account",
        "transfer the money to my savings account",
        "reimburse me to the card on file",
    ),
    "delivery address": (
        "send it to my office instead",
        "ship it to my new address",
        "deliver it to 12 High Street",
    ),
    "refund or exchange": (
        "I want a refund",
        "exchange it for another size",
        "give me store credit",
    ),
    "amenities": ("we need a pool", "it must have parking", "a flat with a garden", "pets allowed"),
    "plan": ("switch to the premium plan", "downgrade to the basic tier", "the family plan"),
    "appointment time": ("the technician can come in the morning", "book the afternoon slot"),
    "vehicle": ("a compact car", "rent an SUV", "a van with automatic transmission"),
    "ticket section": ("seats in the upper tier", "standing tickets near the stage"),
    "seat": ("a window seat", "an aisle seat please"),
    "room type": ("a double room", "a suite with a sea view", "a room with twin beds"),
    "cabin class": ("business class", "fly economy", "first class on the train"),
    "food preference": ("vegetarian food", "an Italian restaurant", "no seafood please"),
    "destination": ("fly to Paris", "we are going to Rome", "a trip to Japan"),
    "origin": ("flying from London", "departing from Berlin"),
    "area": ("near the city centre", "close to the train station", "in a quiet neighbourhood"),
    "contact method": (
        "call me on my phone",
        "email me the details",
        "text me when it's ready",
        "reach me by SMS",
        "send updates to my work address",
    ),
    "sign-in verification": (
        "use an authenticator app for login codes",
        "send the two-factor code by text",
        "verify my login with a security key",
    ),
    "priority": ("mark it as urgent", "raise the priority to high", "low priority, no rush"),
    "meeting format": ("a video call", "meet in person at the office", "a phone call instead"),
    "repair option": (
        "repair it at the store",
        "mail the device in for repair",
        "send a technician to my home",
    ),
    "insurance cover": ("full insurance with no excess", "basic cover only"),
    "billing period": ("bill me monthly", "switch to yearly billing"),
    "operating system": ("Windows rather than Mac", "it should run macOS", "Linux"),
    "colour": ("the blue one", "in black please"),
    "size": ("size medium", "a large one", "size 42 shoes"),
}
"""Attributes a free choice sets (a value that is not a number, date or id)."""
